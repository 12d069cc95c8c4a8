package weir_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// limitNames are table names at and around a server's identifier limit:
// ASCII at the limit, multibyte runes at the limit and one byte short of
// it (a cut must not split a rune), plain non-ASCII, and two names that
// differ only in their last character (shortened names must stay
// distinct).
func limitNames(kind string) []string {
	if kind == "mysql" { // 64 characters; the server's table file takes 5 bytes a non-ASCII character, 255 at most
		return []string{strings.Repeat("a", 64), strings.Repeat("ü", 50), strings.Repeat("名", 49) + "x",
			strings.Repeat("b", 63) + "1", strings.Repeat("b", 63) + "2", "naïve_名前"}
	}
	return []string{ // 63 bytes
		strings.Repeat("a", 63), strings.Repeat("ü", 31) + "x", strings.Repeat("ü", 31), strings.Repeat("名", 21),
		strings.Repeat("b", 62) + "1", strings.Repeat("b", 62) + "2", "naïve_名前"}
}

// TestNames_AtTheLimit: tables named at the server's identifier limit and
// with non-ASCII names go through replace, append, merge, replace again
// and a log_based changelog (its __current view) on PostgreSQL (63 bytes)
// and MariaDB (64 characters), each landing every row; names at the limit
// that differ only at the end stay separate tables.
func TestNames_AtTheLimit(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			ctx := routestest.Context(t, 4*time.Minute)
			src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, kind)
			for i, name := range limitNames(kind) {
				srcName := name
				if kind == "mysql" {
					srcName = fmt.Sprintf("src%d", i) // PostgreSQL cannot hold a 64-character name
				}
				src.Exec(t, ctx, "CREATE TABLE "+src.Table(srcName)+" (id bigint PRIMARY KEY, v text)")
				src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s SELECT g, 'v' || g FROM generate_series(1, %d) g", src.Table(srcName), 10+i))
				want := 10 + i
				opts := weir.TransferOptions{Tables: []string{src.Schema + "." + srcName}, DestTable: dst.Schema + "." + name, Cursor: "id"}
				for _, mode := range []routes.Mode{routes.ModeReplace, routes.ModeAppend, routes.ModeMerge, routes.ModeReplace} {
					opts.Mode = mode
					if _, err := weir.Transfer(ctx, src.URL, dst.URL, opts); err != nil {
						t.Fatalf("%q (%d bytes) %s: %v", name, len(name), mode, err)
					}
					if got := dst.Query(t, ctx, "SELECT count(*) FROM "+dst.Table(name)); got != fmt.Sprint(want) {
						t.Fatalf("%q %s: %s rows, want %d", name, mode, got, want)
					}
					src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (%d, 'new')", src.Table(srcName), want+1))
					want++
				}
			}
			// A changelog at the limit: its log keeps the name, its view's
			// name is shortened to fit and found again by the next run.
			for i, name := range limitNames(kind)[:3] {
				log := cdctest.Open(t, ctx, kind)
				srcName := name
				if kind == "mysql" {
					srcName = fmt.Sprintf("src%d", i)
				}
				o := weir.TransferOptions{Tables: []string{src.Schema + "." + srcName}, DestTable: log.Schema + "." + name, Mode: routes.ModeLogBased, Changelog: true}
				t.Cleanup(func() { weir.ResetLogBased(context.WithoutCancel(ctx), src.URL, log.URL, o) })
				for _, step := range []string{"bootstrap", "next run"} {
					if _, err := weir.Transfer(ctx, src.URL, log.URL, o); err != nil {
						t.Fatalf("changelog %q %s: %v", name, step, err)
					}
					n := src.Query(t, ctx, "SELECT count(*) FROM "+src.Table(srcName))
					view := viewName(t, ctx, log, kind)
					if got := log.Query(t, ctx, "SELECT count(*) FROM "+log.Table(view)); got != n {
						t.Fatalf("changelog %q %s: view %q has %s rows, want %s", name, step, view, got, n)
					}
					src.Exec(t, ctx, fmt.Sprintf("UPDATE %s SET v = 'changed' WHERE id = 1", src.Table(srcName)))
				}
			}
		})
	}
}

// viewName is the one view in the test's schema (the changelog's).
func viewName(t *testing.T, ctx context.Context, d *cdctest.DB, kind string) string {
	t.Helper()
	q := fmt.Sprintf("SELECT table_name FROM information_schema.views WHERE table_schema = '%s'", d.Schema)
	if kind == "mysql" {
		q = fmt.Sprintf("SELECT TABLE_NAME FROM information_schema.VIEWS WHERE TABLE_SCHEMA = '%s'", d.Schema)
	}
	v := d.Query(t, ctx, q)
	if !strings.HasSuffix(v, "__current") {
		t.Fatalf("view %q: want a name ending in __current", v)
	}
	return v
}

// TestNames_Columns: column names a destination cannot hold as they are —
// longer than its identifier limit (PostgreSQL truncates to 63 bytes with
// only a notice), or two names it folds to one (MySQL and BigQuery
// compare column names without case) — are refused as bad input (exit 2)
// before anything is created, naming the table and the column, for
// replace, append, merge and log_based. A name at the limit lands whole.
func TestNames_Columns(t *testing.T) {
	long := strings.Repeat("c", 64)
	cases := []struct {
		src, dst string
		cols     string // the source table's columns after id
		refuse   string // the column the error names; "" lands
		check    string // a column the destination must have, when it lands
	}{
		{"mysql", "postgres", "`" + long + "` text", long, ""},
		{"mysql", "postgres", "`" + long[:63] + "` text", "", long[:63]},
		{"postgres", "mysql", `"Name" text, "name" text`, "name", ""},
		{"postgres", "mysql", `"Ab" text, "aB" text, "c" text`, "aB", ""},
		{"postgres", "mysql", `"Ü" text, "ü" text`, "ü", ""},
		{"postgres", "postgres", `"Name" text, "name" text`, "", "Name"},
		{"postgres", "clickhouse", `"Name" text, "name" text`, "", "Name"},
	}
	for _, c := range cases {
		t.Run(c.src+"→"+c.dst+"/"+c.cols, func(t *testing.T) {
			ctx := routestest.Context(t, 3*time.Minute)
			src, dst := cdctest.Open(t, ctx, c.src), cdctest.Open(t, ctx, c.dst)
			src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" (id bigint PRIMARY KEY, "+c.cols+")")
			src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" (id) VALUES (1), (2)")
			for _, mode := range []routes.Mode{routes.ModeReplace, routes.ModeAppend, routes.ModeMerge, routes.ModeLogBased} {
				if c.refuse == "" && mode == routes.ModeLogBased {
					continue // landing is the bulk routes' concern here
				}
				opts := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestTable: dst.Schema + ".t", Mode: mode, Cursor: "id"}
				if mode == routes.ModeLogBased {
					opts.Cursor = ""
					t.Cleanup(func() { weir.ResetLogBased(context.WithoutCancel(ctx), src.URL, dst.URL, opts) })
				}
				_, err := weir.Transfer(ctx, src.URL, dst.URL, opts)
				if c.refuse == "" {
					if err != nil {
						t.Fatalf("%s: %v", mode, err)
					}
					continue
				}
				if hit := cdctest.Failed(err, src.Schema+".t"); hit == nil || !errors.Is(hit, routes.ErrBadInput) || !strings.Contains(hit.Error(), c.refuse) {
					t.Fatalf("%s: %v, want bad input (exit 2) naming column %q", mode, err, c.refuse)
				}
				if n := dst.Query(t, ctx, dst.CountSQL("", "")); n != "0" {
					t.Fatalf("%s: refused, yet %s tables were created in %s", mode, n, dst.Schema)
				}
			}
			if c.check != "" {
				if got := dst.Query(t, ctx, dst.CountSQL("t", c.check)); got != "1" {
					t.Fatalf("destination has %s columns named %q, want 1", got, c.check)
				}
			}
		})
	}
}

// TestNames_ColumnAddedToCapture: a column the source gains while it is
// captured, named past the replica's limit, is refused the same way at
// the next run, and the replica keeps its columns (PostgreSQL would have
// added it cut to 63 bytes).
func TestNames_ColumnAddedToCapture(t *testing.T) {
	ctx := routestest.Context(t, 3*time.Minute)
	src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, "postgres")
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" (id bigint PRIMARY KEY, v text)")
	src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" VALUES (1, 'a')")
	opts := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestTable: dst.Schema + ".t", Mode: routes.ModeLogBased}
	t.Cleanup(func() { weir.ResetLogBased(context.WithoutCancel(ctx), src.URL, dst.URL, opts) })
	if _, err := weir.Transfer(ctx, src.URL, dst.URL, opts); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("c", 64)
	src.Exec(t, ctx, "ALTER TABLE "+src.Table("t")+" ADD COLUMN `"+long+"` text")
	src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" VALUES (2, 'b', 'x')")
	_, err := weir.Transfer(ctx, src.URL, dst.URL, opts)
	if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(fmt.Sprint(err), long) {
		t.Fatalf("run after the source added a 64-character column: %v, want bad input naming it", err)
	}
	if got := dst.Query(t, ctx, fmt.Sprintf("SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = '%s' AND table_name = 't'", dst.Schema)); got != "id,v" {
		t.Fatalf("replica columns %q, want id,v", got)
	}
}
