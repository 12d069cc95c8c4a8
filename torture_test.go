package weir_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// The bulk type-torture harness: for each source (PostgreSQL, MariaDB,
// ClickHouse, Iceberg) a table per type holding its edge values, moved by
// weir.Transfer (the code `weir transfer` runs) in replace and in append
// mode into every destination (PostgreSQL, MariaDB, ClickHouse, Iceberg,
// Parquet files), then compared value by value with the source server's
// own rendering of each value (cdctest.Case.Want; the source read through
// weir is checked against it first). Every value lands exact, or the table
// is refused as bad input naming it and column v (exit 2) — never
// altered with exit 0. The CDC harnesses (cdc/pgwal, cdc/binlog
// types_test.go) compare through the same cdctest.Compare.

// tortureDests are the destinations every source's cases go to.
var tortureDests = []string{"postgres", "mysql", "clickhouse", "iceberg", "file"}

// tortureSource makes a source's case tables and returns it.
type tortureSource struct {
	cases []cdctest.Case
	open  func(t *testing.T, ctx context.Context, cases []cdctest.Case) *cdctest.DB
}

var tortureSources = map[string]tortureSource{
	"postgres":   {pgTorture, openPGTorture},
	"mysql":      {mysqlTorture, openMySQLTorture},
	"clickhouse": {chTorture, openCHTorture},
	"iceberg":    {icebergTorture, openIcebergTorture},
}

func TestTypeTorture_Bulk(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql", "clickhouse", "iceberg"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel() // the sources' servers differ: under a minute in all
			ctx := routestest.Context(t, 3*time.Minute)
			ts := tortureSources[kind]
			src := ts.open(t, ctx, ts.cases)
			// the source's own rendering, read back through weir: a
			// source decoder that alters a value fails here
			srcTypes := map[string]arrow.DataType{}
			for _, c := range ts.cases {
				if c.Refuses("source") {
					continue
				}
				got, types := cdctest.SourceValues(t, ctx, src, c.Table(), []string{"v"})
				srcTypes[c.Name] = types[0]
				for id, w := range c.Want() {
					if g := got[id]; len(g) != 1 || g[0] != w[0] {
						t.Errorf("source %s %s (%s) id=%s: weir reads %q, the server holds %q", kind, c.Table(), c.Type, id, g, w[0])
					}
				}
			}
			for _, dk := range tortureDests {
				for _, mode := range []routes.Mode{routes.ModeReplace, routes.ModeAppend} {
					t.Run(dk+"/"+string(mode), func(t *testing.T) {
						tortureRun(t, ctx, src, dk, mode, ts.cases, srcTypes)
					})
				}
			}
		})
	}
}

// tortureRun moves every case table of src into a new destination of kind
// dk in mode, and checks each table: refused as bad input naming it and v
// where the case says so, else every value exact.
func tortureRun(t *testing.T, ctx context.Context, src *cdctest.DB, dk string, mode routes.Mode, cases []cdctest.Case, srcTypes map[string]arrow.DataType) {
	dst := cdctest.Open(t, ctx, dk)
	var tables []string
	for _, c := range cases {
		tables = append(tables, src.Schema+"."+c.Table())
	}
	dstURL := dst.URL
	if dk == "clickhouse" {
		dstURL = dst.URLWith("lease=2s")
	}
	_, err := weir.Transfer(ctx, src.URL, dstURL, weir.TransferOptions{Tables: tables, DestSchema: dst.Schema, Mode: mode, Cursor: "id", Parallel: 2})
	for _, e := range cdctest.Unjoin(err) {
		if !errors.Is(e, routes.ErrBadInput) {
			t.Errorf("%s → %s %s: a failure that is not bad input: %v", src.Kind, dk, mode, e)
		}
	}
	for _, c := range cases {
		name := src.Schema + "." + c.Table()
		if c.Refuses(dk) {
			if rerr := cdctest.Refused(err, name); rerr != nil {
				t.Errorf("%s (%s) → %s %s: %v", c.Table(), c.Type, dk, mode, rerr)
			}
			// a refused table lands nothing: the destination is new, so
			// the table is not there at all
			if dst.Exists(t, ctx, c.Table()) {
				t.Errorf("%s (%s) → %s %s: refused, but the destination table exists", c.Table(), c.Type, dk, mode)
			}
			continue
		}
		if e := cdctest.Failed(err, name); e != nil {
			t.Errorf("%s (%s) → %s %s: refused, want every value exact: %v", c.Table(), c.Type, dk, mode, e)
			continue
		}
		cdctest.Compare(t, ctx, dst, c.Table(), []string{"v"}, []arrow.DataType{srcTypes[c.Name]}, c.Want(), fmt.Sprintf("%s → %s %s", src.Kind, dk, mode))
	}
}

// lit quotes s as a SQL string literal.
func lit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// v is a value whose literal is its quoted want; w one whose literal
// differs from its canonical text.
func v(want string) cdctest.Value    { return cdctest.Value{Lit: lit(want), Want: want} }
func w(l, want string) cdctest.Value { return cdctest.Value{Lit: l, Want: want} }

func vs(vals ...string) []cdctest.Value {
	out := make([]cdctest.Value, len(vals))
	for i, s := range vals {
		out[i] = cdctest.Value{Lit: s, Want: strings.Trim(s, "'")}
	}
	return out
}
