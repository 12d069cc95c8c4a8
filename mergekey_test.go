package weir_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/bigquery/bigquerytest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestMerge_RepeatedKeyRefused: a merge source that brings two rows with
// one merge key in one run has no defined winner (the pipes read ranges in
// parallel, so no row is "last"). Every merge destination refuses the run
// as bad input naming the source table, the key column(s) and an example
// key, before the commit: the destination keeps what it had, the watermark
// does not move, and once the source is fixed the next run lands the rows.
// A key the run brings once while the destination already has it is an
// update, not a repeat. It failed three ways: Iceberg kept both rows (exit
// 0), PostgreSQL and MariaDB failed with a raw unique-index error.
func TestMerge_RepeatedKeyRefused(t *testing.T) {
	dests := []string{"postgres", "mysql", "clickhouse", "iceberg", "bigquery"}
	keys := []struct {
		name    string
		kType   string   // the type of column k
		key     []string // the merge key
		example string   // how the refusal names the repeated key (MariaDB joins a composite key's values with '-')
	}{
		{"int key", "bigint", []string{"k"}, "(k) = (60)"},
		{"text key", "text", []string{"k"}, "(k) = (60)"},
		{"composite key", "bigint", []string{"k", "g"}, "(k, g) = (60, g60)"},
	}
	for _, dk := range dests {
		t.Run(dk, func(t *testing.T) {
			ctx := routestest.Context(t, 4*time.Minute)
			for _, kc := range keys {
				if dk == "mysql" {
					kc.example = strings.Replace(kc.example, "60, g60", "60-g60", 1)
				}
				t.Run(kc.name, func(t *testing.T) {
					src := cdctest.Open(t, ctx, "postgres")
					dstURL, dstSchema, read := mergeDest(t, ctx, dk)
					src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (seq bigint PRIMARY KEY, k %s NOT NULL, g varchar(20) NOT NULL, v text)", src.Table("s"), kc.kType))
					ins := func(seq, k int, g string) {
						src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (%d, '%d', '%s', 'v%d')", src.Table("s"), seq, k, g, seq))
					}
					for i := 1; i <= 50; i++ {
						ins(i, i, fmt.Sprintf("g%d", i))
					}
					opts := weir.TransferOptions{Tables: []string{src.Schema + ".s"}, DestTable: dstSchema + ".d", Mode: routes.ModeMerge,
						Cursor: "seq", PrimaryKey: kc.key, Parallel: 4}
					run := func() error { _, err := weir.Transfer(ctx, src.URL, dstURL, opts); return err }

					// A repeat on the first run: the destination is not created.
					ins(51, 20, "g20")
					err := run()
					wantRefusal(t, err, "first run", src.Schema+".s", kc.key, strings.ReplaceAll(kc.example, "60", "20"))
					if got := read(dstSchema + ".d"); got != nil {
						t.Fatalf("the refused first run left the destination with %v", got)
					}
					src.Exec(t, ctx, "DELETE FROM "+src.Table("s")+" WHERE seq = 51")
					if err := run(); err != nil {
						t.Fatalf("first run, the source fixed: %v", err)
					}
					want := seqRange(1, 50)
					if got := read(dstSchema + ".d"); !slices.Equal(got, want) {
						t.Fatalf("after the first run: seq %v, want %v", got, want)
					}

					// The next run: 52..100, an update of key 7 (in the
					// destination, once in the run), a row with k = 60 but
					// another g (a repeat only for the single-column key),
					// and a true repeat of key 60 far from its first row
					// (another pipe).
					for i := 52; i <= 100; i++ {
						ins(i, i, fmt.Sprintf("g%d", i))
					}
					ins(101, 7, "g7")
					if len(kc.key) == 2 {
						ins(102, 60, "other")
					}
					ins(103, 60, "g60")
					err = run()
					wantRefusal(t, err, "next run", src.Schema+".s", kc.key, kc.example)
					if got := read(dstSchema + ".d"); !slices.Equal(got, want) {
						t.Fatalf("the refused run changed the destination: seq %v, want %v", got, want)
					}
					if dk == "bigquery" {
						return // the emulator's MERGE fails on any table (docs/bigquery.md, Emulator): the refusals above are what it can show
					}
					src.Exec(t, ctx, "DELETE FROM "+src.Table("s")+" WHERE seq = 103")
					if err := run(); err != nil {
						t.Fatalf("next run, the source fixed: %v", err)
					}
					want = append(slices.DeleteFunc(seqRange(1, 100), func(s int64) bool { return s == 7 || s == 51 }), 101)
					if len(kc.key) == 2 {
						want = append(want, 102)
					}
					slices.Sort(want)
					if got := read(dstSchema + ".d"); !slices.Equal(got, want) {
						t.Fatalf("after the fixed run: seq %v, want %v", got, want)
					}
				})
			}
		})
	}
}

// mergeDest opens a destination of kind; it returns its URL, the schema
// (dataset, namespace, database) its tables go in, and a reader of a
// table's seq column (ClickHouse: FINAL, the merged view of a
// ReplacingMergeTree).
func mergeDest(t *testing.T, ctx context.Context, kind string) (string, string, func(table string) []int64) {
	if kind == "bigquery" {
		f := bigquerytest.New(t)
		// BigQuery is a destination only in weir: read it with the client.
		return f.URL(), f.Dataset, func(table string) []int64 {
			name := strings.TrimPrefix(table, f.Dataset+".")
			if !f.Exists(t, ctx, name) {
				return nil
			}
			var out []int64
			for _, row := range f.Query(t, ctx, "SELECT seq FROM "+f.Ident(name)+" ORDER BY seq") {
				out = append(out, bigquerytest.Int(t, row[0]))
			}
			return out
		}
	}
	d := cdctest.Open(t, ctx, kind)
	read := func(table string) []int64 { return seqs(t, ctx, d.URL, table) }
	if kind == "clickhouse" {
		read = func(table string) []int64 {
			if d.Query(t, ctx, "SELECT toString(count()) FROM system.tables WHERE database = '"+d.Schema+"' AND name = 'd'") == "0" {
				return nil
			}
			var out []int64
			for _, s := range strings.Fields(d.Query(t, ctx, "SELECT arrayStringConcat(groupArray(toString(seq)), ' ') FROM (SELECT seq FROM "+d.Table("d")+" FINAL ORDER BY seq)")) {
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, n)
			}
			return out
		}
	}
	return d.URL, d.Schema, read
}

func wantRefusal(t *testing.T, err error, step, srcTable string, key []string, example string) {
	t.Helper()
	var pe *routes.ProbeError
	if !errors.As(err, &pe) {
		t.Fatalf("%s with a repeated merge key: err = %v, want bad input (exit 2)", step, err)
	}
	msg := err.Error()
	for _, want := range []string{srcTable, strings.Join(key, ", "), example, "--primary-key"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%s: the refusal %q does not say %q", step, msg, want)
		}
	}
}

// seqs reads the seq column of a destination table, sorted; nil when the
// table does not exist.
func seqs(t *testing.T, ctx context.Context, url, table string) []int64 {
	t.Helper()
	r, err := weir.Read(ctx, url, table, weir.ReadOptions{Columns: []string{"seq"}})
	if errors.Is(err, routes.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	defer r.Release()
	var out []int64
	for r.Next() {
		a := r.RecordBatch().Column(0)
		for i := range a.Len() {
			switch a := a.(type) {
			case *array.Int64:
				out = append(out, a.Value(i))
			default:
				t.Fatalf("seq is %s", a.DataType())
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	slices.Sort(out)
	return out
}

func seqRange(lo, hi int64) []int64 {
	var out []int64
	for i := lo; i <= hi; i++ {
		out = append(out, i)
	}
	return out
}
