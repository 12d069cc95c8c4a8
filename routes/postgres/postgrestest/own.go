package postgrestest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// UseOwnDatabase points WEIR_TEST_PG, for the rest of this test binary
// (its child processes and ${WEIR_TEST_PG} in generated configs
// included), at a database of the package's own on the same server,
// created the first time and kept (one per package: the state does not
// grow). A package whose tests make logical replication slots calls it
// from TestMain: a slot decodes every change in its database, so in the
// shared database other packages' concurrent DDL went through this
// package's decoders, and PostgreSQL 15's decoder once failed on it
// ("could not map filenode … to relation OID", CI of 2026-12-07). In
// its own database a slot sees only its own package's changes.
//
// With WEIR_TEST_PG unset or its server unreachable it does nothing: the
// tests' own ServerURL says what is wrong, or skips.
func UseOwnDatabase(name string) {
	raw := os.Getenv(Env)
	if raw == "" {
		return
	}
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, raw)
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	if err := createDatabase(ctx, conn, name); err != nil {
		fmt.Fprintf(os.Stderr, "postgrestest: %v\n", err)
		os.Exit(1)
	}
	u.Path = "/" + name
	os.Setenv(Env, u.String())
}

// createDatabase creates name unless it exists; two test binaries may
// race to create it.
func createDatabase(ctx context.Context, conn *pgx.Conn, name string) error {
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return fmt.Errorf("look for database %s: %w", name, err)
	}
	if exists {
		return nil
	}
	_, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "42P04" || pe.Code == "23505") { // duplicate_database, or the race on pg_database's index
		return nil
	}
	if err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}
