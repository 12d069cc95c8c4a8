package weir_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// TestAttackS11_MySQLColumnFolding: routes.CheckColumnNames folds MySQL
// column names with Go's strings.ToLower (current Unicode), MariaDB with
// its own older case table. Pairs MariaDB holds as two columns (checked
// by hand: CREATE TABLE t (`ẞ` int, `ß` int) succeeds, as do Ա/ա-like
// newer pairs Ა/ა, Ꭰ/ꭰ, ϴ/θ, Ⱥ/ⱥ) are refused as bad input (exit 2), a
// table the destination can hold.
func TestAttackS11_MySQLColumnFolding(t *testing.T) {
	for _, cols := range []string{`"ẞ" text, "ß" text`, `"Ა" text, "ა" text`, `"ϴ" text, "θ" text`} {
		t.Run(cols, func(t *testing.T) {
			ctx := routestest.Context(t, 2*time.Minute)
			src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "mysql")
			src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" (id bigint PRIMARY KEY, "+cols+")")
			src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" (id) VALUES (1), (2)")
			opts := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestTable: dst.Schema + ".t", Mode: routes.ModeReplace}
			if _, err := weir.Transfer(ctx, src.URL, dst.URL, opts); err != nil {
				t.Fatalf("MariaDB holds these as two columns, yet: %v", err)
			}
		})
	}
}

// TestAttackS11_MySQLColumnOutsideBMP: MariaDB's identifiers are utf8mb3,
// so a column named with a character outside the BMP ("😀", fine in
// PostgreSQL) cannot land as named: the server answers "Invalid utf8mb4
// character string" naming neither table nor column. CheckColumnNames
// should refuse it as bad input (exit 2) naming the column, before
// anything is created, like a name past 64 characters.
func TestAttackS11_MySQLColumnOutsideBMP(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "mysql")
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+` (id bigint PRIMARY KEY, "v😀" text)`)
	src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" (id) VALUES (1), (2)")
	opts := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestTable: dst.Schema + ".t", Mode: routes.ModeReplace}
	_, err := weir.Transfer(ctx, src.URL, dst.URL, opts)
	if hit := cdctest.Failed(err, src.Schema+".t"); hit == nil || !errors.Is(hit, routes.ErrBadInput) || !strings.Contains(hit.Error(), "v😀") {
		t.Fatalf("got %v, want bad input (exit 2) naming column \"v😀\"", err)
	}
	if n := dst.Query(t, ctx, dst.CountSQL("", "")); n != "0" {
		t.Fatalf("refused, yet %s tables were created in %s", n, dst.Schema)
	}
}

// TestAttackS11_SourceColumnNamedLikeWeirs: a source column named as one
// of the columns weir adds to a ClickHouse replica (_weir_version,
// _weir_deleted) cannot land as named there: the run must be refused as
// bad input naming it, or land the source's values under that name —
// never mix them with weir's bookkeeping.
func TestAttackS11_SourceColumnNamedLikeWeirs(t *testing.T) {
	for _, col := range []string{"_weir_deleted", "_weir_version"} {
		t.Run(col, func(t *testing.T) {
			ctx := routestest.Context(t, 2*time.Minute)
			src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "clickhouse")
			src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+` (id bigint PRIMARY KEY, "`+col+`" bigint)`)
			src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" VALUES (1, 7), (2, 7)")
			opts := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestTable: dst.Schema + ".t", Mode: routes.ModeLogBased}
			t.Cleanup(func() {
				err := weir.ResetLogBased(context.WithoutCancel(ctx), src.URL, dst.URL, opts)
				t.Logf("reset: %v; slots now: %s", err, src.Query(t, context.WithoutCancel(ctx), "SELECT string_agg(slot_name, ',') FROM pg_replication_slots"))
			})
			_, err := weir.Transfer(ctx, src.URL, dst.URL, opts)
			if err != nil {
				if hit := cdctest.Failed(err, src.Schema+".t"); hit == nil || !errors.Is(hit, routes.ErrBadInput) || !strings.Contains(hit.Error(), col) {
					t.Fatalf("got %v, want either the rows or bad input (exit 2) naming column %q", err, col)
				}
				return
			}
			src.Exec(t, ctx, "UPDATE "+src.Table("t")+" SET id = id WHERE id = 1")
			if _, err := weir.Transfer(ctx, src.URL, dst.URL, opts); err != nil {
				if hit := cdctest.Failed(err, src.Schema+".t"); hit == nil || !errors.Is(hit, routes.ErrBadInput) || !strings.Contains(hit.Error(), col) {
					t.Fatalf("second run: %v, want either the rows or bad input (exit 2) naming column %q", err, col)
				}
				return
			}
			got := dst.Query(t, ctx, "SELECT arrayStringConcat(groupArray(toString(tuple(*))), ' ') FROM (SELECT * FROM "+dst.Live(t, ctx, "t")+" ORDER BY id)")
			t.Logf("replica: %s", got)
			if n := dst.Query(t, ctx, "SELECT toString(count()) FROM "+dst.Live(t, ctx, "t")); n != "2" {
				t.Fatalf("the replica has %s live rows, want 2 (%s)", n, got)
			}
		})
	}
}
