// Package capture runs one log_based transfer: it picks the capture by the
// source URL's scheme (postgres → cdc/pgwal, mysql/mariadb → cdc/binlog)
// and hands the pairs to it. weir transfer --mode log_based and weir once
// (runner) both come through here.
package capture

import (
	"context"
	"fmt"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/cdc/binlog"
	"github.com/weirhq/weir/cdc/pgwal"
	"github.com/weirhq/weir/routes"
)

// Options shape a pair's runs.
type Options struct {
	// Changelog: the destination tables are append-only logs of every
	// change (docs/cdc.md) instead of replicas. Part of the pair's identity
	// (the PostgreSQL slot's name).
	Changelog bool
	// SlotWALWarn: a PostgreSQL slot retaining more WAL than this many
	// bytes is warned about (0: pgwal.DefaultSlotWALWarn, 4 GiB).
	SlotWALWarn int64
}

// Run bootstraps or drains the (src, dst, tables) pair once into replicas.
func Run(ctx context.Context, src, dst string, tables []cdc.Pair, runID string) (cdc.Result, error) {
	return RunWith(ctx, src, dst, tables, runID, Options{})
}

// RunWith is Run with options.
func RunWith(ctx context.Context, src, dst string, tables []cdc.Pair, runID string, o Options) (cdc.Result, error) {
	kind, err := kindOf(src, tables)
	if err != nil {
		return cdc.Result{}, err
	}
	if kind == pgwal.Scheme {
		return pgwal.Run(ctx, pgwal.Config{SourceURL: src, DestURL: dst, Tables: tables, RunID: runID, Changelog: o.Changelog, SlotWALWarn: o.SlotWALWarn})
	}
	return binlog.Run(ctx, binlog.Config{SourceURL: src, DestURL: dst, Tables: tables, RunID: runID, Changelog: o.Changelog})
}

// Drop forgets the pair's position (and drops a PostgreSQL slot and
// publication), so the next Run bootstraps again: weir reset.
func Drop(ctx context.Context, src, dst string, tables []cdc.Pair) error {
	return DropWith(ctx, src, dst, tables, Options{})
}

// DropWith is Drop with the options the pair runs with.
func DropWith(ctx context.Context, src, dst string, tables []cdc.Pair, o Options) error {
	kind, err := kindOf(src, tables)
	if err != nil {
		return err
	}
	if kind == pgwal.Scheme {
		return pgwal.Drop(ctx, pgwal.Config{SourceURL: src, DestURL: dst, Tables: tables, Changelog: o.Changelog})
	}
	return binlog.Drop(ctx, binlog.Config{SourceURL: src, DestURL: dst, Tables: tables, Changelog: o.Changelog})
}

// kindOf checks the pairs and names the capture for the source's scheme.
func kindOf(src string, tables []cdc.Pair) (string, error) {
	u, err := routes.ParseURL(src)
	if err != nil {
		return "", err
	}
	for _, p := range tables {
		if p.Source.Schema == "" || p.Dest.Schema == "" {
			return "", routes.BadInput("log_based: %s → %s: name tables as schema.table (database.table on MySQL)", p.Source, p.Dest)
		}
	}
	switch u.Scheme() {
	case "postgres", "postgresql":
		return pgwal.Scheme, nil
	case "mysql", "mariadb":
		return "binlog", nil
	}
	return "", fmt.Errorf("%w: log_based from %s: change capture reads postgres (WAL) and mysql/mariadb (binlog) sources", routes.ErrUnsupported, u)
}

// Status reports where the pair stands in its source's log (weir status):
// the committed position, the log's end and the bytes between them, the
// PostgreSQL slot's retained WAL, a lost slot or purged binlog. It reads
// and changes nothing of the log.
func Status(ctx context.Context, src, dst string, tables []cdc.Pair, o Options) (cdc.LogLag, error) {
	kind, err := kindOf(src, tables)
	if err != nil {
		return cdc.LogLag{}, err
	}
	if kind == pgwal.Scheme {
		return pgwal.Status(ctx, pgwal.Config{SourceURL: src, DestURL: dst, Tables: tables, Changelog: o.Changelog, SlotWALWarn: o.SlotWALWarn})
	}
	return binlog.Status(ctx, binlog.Config{SourceURL: src, DestURL: dst, Tables: tables, Changelog: o.Changelog})
}
