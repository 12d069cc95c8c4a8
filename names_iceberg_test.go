package weir_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// writtenCollisions are pairs of column names Iceberg writes into its data
// files under one name: iceberg-go (like Iceberg Java) writes a name that
// is not an Avro name escaped, a character other than a letter, digit or
// _ (or any outside the Basic Multilingual Plane) as _x and its UTF-16
// code in hex, a leading digit as _ and the digit (iceberg.SanitizeColumnNames).
var writtenCollisions = [][2]string{
	{"a.b", "a_x2Eb"},     // punctuation
	{"a-b", "a_x2Db"},     // punctuation
	{"a b", "a_x20b"},     // a space
	{"1a", "_1a"},         // a leading digit
	{"a²", "a_xB2"},       // a non-ASCII character that is not a letter or digit
	{"e\u0301", "e_x301"}, // a combining mark
	{"😀", "_xD83D_xDE00"}, // outside the BMP: its UTF-16 surrogates
}

// oddNames are sets of columns that do not collide when written, though
// each is odd: they must land in Iceberg, and read back, under exactly
// these names. "1a" and "_x31a" differ as written (a leading digit is
// written as _1); Iceberg compares names exactly, so "Name" and "name"
// are two columns.
var oddNames = [][]string{
	{"a.b"},
	{"a b", "naïve", "名前", "ü"},
	{"1a", "_x31a"},
	{"Name", "name"},
	{"😀", "a.b.c", "a_x2Eb_"},
}

// icebergModes are the routes into an Iceberg table: bulk replace, append
// and merge, a log_based replica and a log_based changelog.
var icebergModes = []string{"replace", "append", "merge", "replica", "changelog"}

func namesOpts(src, dst *cdctest.DB, mode string) weir.TransferOptions {
	o := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestTable: dst.Schema + ".t", Cursor: "id"}
	switch mode {
	case "replica", "changelog":
		o.Cursor, o.Mode, o.Changelog = "", routes.ModeLogBased, mode == "changelog"
	default:
		o.Mode = routes.Mode(mode)
	}
	return o
}

// quoteCol quotes a column name for the source's SQL.
func quoteCol(kind, name string) string {
	if kind == "mysql" {
		return "`" + name + "`"
	}
	return `"` + name + `"`
}

func createNamed(t *testing.T, ctx context.Context, src *cdctest.DB, cols []string) {
	t.Helper()
	defs := []string{"id bigint PRIMARY KEY"}
	for _, c := range cols {
		defs = append(defs, quoteCol(src.Kind, c)+" text")
	}
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" ("+strings.Join(defs, ", ")+")")
	names := []string{"id"}
	vals := []string{"1"}
	for i, c := range cols {
		names = append(names, quoteCol(src.Kind, c))
		vals = append(vals, fmt.Sprintf("'v%d'", i))
	}
	src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" ("+strings.Join(names, ", ")+") VALUES ("+strings.Join(vals, ", ")+"), (2"+strings.Repeat(", NULL", len(cols))+")")
}

// warehouseFiles lists the files under an Iceberg test URL's warehouse.
func warehouseFiles(t *testing.T, d *cdctest.DB) []string {
	t.Helper()
	_, rest, ok := strings.Cut(d.URL, "warehouse=file://")
	if !ok {
		t.Fatalf("%s: no file warehouse", d.URL)
	}
	dir, _, _ := strings.Cut(rest, "&")
	var files []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	return files
}

// TestNames_IcebergWrittenCollision: two source columns that Iceberg
// would write into its data files under one name are refused as bad
// input (exit 2) naming both columns and the table, before anything is
// written (no table, no file in the warehouse), through every route into
// Iceberg: replace, append, merge, a log_based replica and changelog,
// from PostgreSQL (pgwal) and MariaDB (binlog).
func TestNames_IcebergWrittenCollision(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql"} {
		for _, pair := range writtenCollisions {
			if kind == "mysql" && (strings.ContainsRune(pair[0], '😀') || pair[0] == "e\u0301") {
				continue // MySQL identifiers: BMP only; a combining mark is not a column name MariaDB keeps apart
			}
			t.Run(kind+"/"+pair[0]+"+"+pair[1], func(t *testing.T) {
				ctx := routestest.Context(t, 3*time.Minute)
				src := cdctest.Open(t, ctx, kind)
				createNamed(t, ctx, src, pair[:])
				for _, mode := range icebergModes {
					dst := cdctest.Open(t, ctx, "iceberg")
					opts := namesOpts(src, dst, mode)
					if opts.Mode == routes.ModeLogBased {
						t.Cleanup(func() { weir.ResetLogBased(context.WithoutCancel(ctx), src.URL, dst.URL, opts) })
					}
					_, err := weir.Transfer(ctx, src.URL, dst.URL, opts)
					hit := cdctest.Failed(err, src.Schema+".t")
					if hit == nil || !errors.Is(hit, routes.ErrBadInput) || !strings.Contains(hit.Error(), pair[0]) || !strings.Contains(hit.Error(), pair[1]) {
						t.Fatalf("%s: %v, want bad input (exit 2) naming %s.t and both columns %q and %q", mode, err, src.Schema, pair[0], pair[1])
					}
					if mode == "replace" {
						t.Logf("%s: %v", mode, hit)
					}
					if dst.Exists(t, ctx, "t") {
						t.Fatalf("%s: refused, yet the Iceberg table was created", mode)
					}
					if files := warehouseFiles(t, dst); len(files) > 0 {
						t.Fatalf("%s: refused, yet the warehouse has files %v", mode, files)
					}
				}
			})
		}
	}
}

// readBack is the table as weir read gives it: its column names in order
// and its rows (cells '|'-separated, NULL as \N) sorted.
func readBack(t *testing.T, ctx context.Context, d *cdctest.DB, table string) ([]string, []string) {
	t.Helper()
	rr, err := weir.Read(ctx, d.URL, d.Schema+"."+table, weir.ReadOptions{})
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	defer rr.Release()
	var names []string
	for _, f := range rr.Schema().Fields() {
		names = append(names, f.Name)
	}
	var rows []string
	for rr.Next() {
		rec := rr.RecordBatch()
		for i := range int(rec.NumRows()) {
			cells := make([]string, rec.NumCols())
			for c := range cells {
				if rec.Column(c).IsNull(i) {
					cells[c] = `\N`
				} else {
					cells[c] = rec.Column(c).ValueStr(i)
				}
			}
			rows = append(rows, strings.Join(cells, "|"))
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	slices.Sort(rows)
	return names, rows
}

// TestNames_OddColumnsRoundTrip: columns whose names are odd (a dot, a
// space, a leading digit, non-ASCII, outside the BMP, two differing only
// in case) but do not collide where they land are written, and read back
// by weir read, under exactly their own names with their values: Iceberg
// through every route into it, and the destinations that do not escape
// names (ClickHouse, Parquet files) for the pairs Iceberg refuses.
func TestNames_OddColumnsRoundTrip(t *testing.T) {
	type dest struct {
		kind  string
		modes []string
		sets  [][]string
	}
	var pairs [][]string
	for _, p := range writtenCollisions {
		pairs = append(pairs, p[:])
	}
	dests := []dest{
		{"iceberg", icebergModes, oddNames},
		{"file", []string{"replace", "append"}, append(slices.Clone(oddNames), pairs...)},
		{"clickhouse", []string{"replace", "append", "merge"}, append(slices.Clone(oddNames), pairs...)},
	}
	for _, d := range dests {
		for _, cols := range d.sets {
			t.Run(d.kind+"/"+strings.Join(cols, "+"), func(t *testing.T) {
				ctx := routestest.Context(t, 3*time.Minute)
				src := cdctest.Open(t, ctx, "postgres")
				createNamed(t, ctx, src, cols)
				wantNames := append([]string{"id"}, cols...)
				vals := []string{"1"}
				nulls := []string{"2"}
				for i := range cols {
					vals, nulls = append(vals, fmt.Sprintf("v%d", i)), append(nulls, `\N`)
				}
				wantRows := []string{strings.Join(vals, "|"), strings.Join(nulls, "|")}
				for _, mode := range d.modes {
					dst := cdctest.Open(t, ctx, d.kind)
					opts := namesOpts(src, dst, mode)
					if opts.Mode == routes.ModeLogBased {
						t.Cleanup(func() { weir.ResetLogBased(context.WithoutCancel(ctx), src.URL, dst.URL, opts) })
					}
					if _, err := weir.Transfer(ctx, src.URL, dst.URL, opts); err != nil {
						t.Fatalf("%s: %v", mode, err)
					}
					names, rows := readBack(t, ctx, dst, "t")
					if mode == "changelog" { // the source's columns, then the log's own
						names = names[:min(len(names), len(wantNames))]
						for i, r := range rows {
							rows[i] = strings.Join(strings.Split(r, "|")[:len(wantNames)], "|")
						}
					}
					if !slices.Equal(names, wantNames) || !slices.Equal(rows, wantRows) {
						t.Fatalf("%s: read back columns %q rows %q, want %q rows %q", mode, names, rows, wantNames, wantRows)
					}
				}
			})
		}
	}
}

// TestNames_IcebergColumnAddedCollides: a column the source gains that
// Iceberg would write under the name of one the table has is refused at
// the next run (append, and a log_based replica's next run), as bad input
// naming both, and the table keeps its columns.
func TestNames_IcebergColumnAddedCollides(t *testing.T) {
	for _, mode := range []string{"append", "replica"} {
		t.Run(mode, func(t *testing.T) {
			ctx := routestest.Context(t, 3*time.Minute)
			src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "iceberg")
			createNamed(t, ctx, src, []string{"a.b"})
			opts := namesOpts(src, dst, mode)
			if opts.Mode == routes.ModeLogBased {
				t.Cleanup(func() { weir.ResetLogBased(context.WithoutCancel(ctx), src.URL, dst.URL, opts) })
			}
			if _, err := weir.Transfer(ctx, src.URL, dst.URL, opts); err != nil {
				t.Fatal(err)
			}
			src.Exec(t, ctx, "ALTER TABLE "+src.Table("t")+` ADD COLUMN "a_x2Eb" text`)
			src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+` VALUES (3, 'x', 'y')`)
			_, err := weir.Transfer(ctx, src.URL, dst.URL, opts)
			if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(fmt.Sprint(err), `"a.b"`) || !strings.Contains(fmt.Sprint(err), `"a_x2Eb"`) {
				t.Fatalf("run after the source added a_x2Eb: %v, want bad input naming a.b and a_x2Eb", err)
			}
			if names, rows := readBack(t, ctx, dst, "t"); !slices.Equal(names, []string{"id", "a.b"}) || len(rows) != 2 {
				t.Fatalf("the table now has columns %q and %d rows, want id, a.b and 2", names, len(rows))
			}
		})
	}
}
