package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

// TestTPCH_IncrementalAggregates runs examples/tpch: lineitem from DuckDB's
// own TPC-H generator (SF 0.01) lands in bronze in 10 batches by order
// key, and after every batch the declared aggregates tpch_q1 and tpch_q6 —
// which read only the new rows — equal DuckDB's answer to TPC-H Q1 and Q6
// (the text of its tpch extension) over every row landed so far: the same
// groups, every sum and count as exact decimal text of the same type, the
// averages at their declared scale (DECIMAL(18,4)).
func TestTPCH_IncrementalAggregates(t *testing.T) {
	ctx := testContext(t)
	path := copyExample(t, "tpch", "weir.yaml", "models/q1.sql", "models/q6.sql")
	data := filepath.Join(filepath.Dir(path), "data")
	os.MkdirAll(data, 0o755)
	db, err := duck.Open(ctx, duck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Exec(ctx, "LOAD tpch; CREATE SCHEMA gen; CALL dbgen(sf=0.01, schema='gen')"); err != nil {
		t.Fatal(err)
	}
	var maxKey, total int64
	if err := db.QueryRow(ctx, "SELECT max(l_orderkey), count(*) FROM gen.lineitem", &maxKey, &total); err != nil {
		t.Fatal(err)
	}
	var q1, q6 string
	if err := db.QueryRow(ctx, "SELECT (SELECT query FROM tpch_queries() WHERE query_nr = 1), (SELECT query FROM tpch_queries() WHERE query_nr = 6)", &q1, &q6); err != nil {
		t.Fatal(err)
	}
	q1, q6 = strings.TrimRight(strings.TrimSpace(q1), ";"), strings.TrimRight(strings.TrimSpace(q6), ";")
	r, err := Load(path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const batches = 10
	var landed int64
	types := map[string]string{}
	for i := 1; i <= batches; i++ {
		bound := (maxKey*int64(i) + batches - 1) / batches
		file := filepath.Join(data, "lineitem.parquet")
		if err := db.Exec(ctx, fmt.Sprintf("COPY (SELECT * FROM gen.lineitem WHERE l_orderkey <= %d ORDER BY l_orderkey, l_linenumber) TO %s (FORMAT parquet)", bound, duck.Literal(file))); err != nil {
			t.Fatal(err)
		}
		// DuckDB's own answers read main.lineitem: every row landed so far.
		if err := db.Exec(ctx, fmt.Sprintf("CREATE OR REPLACE TABLE main.lineitem AS SELECT * FROM gen.lineitem WHERE l_orderkey <= %d", bound)); err != nil {
			t.Fatal(err)
		}
		var now int64
		if err := db.QueryRow(ctx, "SELECT count(*) FROM main.lineitem", &now); err != nil {
			t.Fatal(err)
		}
		reps := pass(t, r)
		for _, task := range []string{"tpch_q1", "tpch_q6"} {
			if rep := reps[task]; rep.Error != "" || rep.RowsIn != now-landed {
				t.Fatalf("batch %d: %s read %d rows, want only the %d new ones: %+v", i, task, rep.RowsIn, now-landed, rep)
			}
		}
		landed = now
		loadSink(t, r, db, "gold.tpch_q1", "got_q1")
		loadSink(t, r, db, "gold.tpch_q6", "got_q6")
		avg := func(c string) string { return "CAST(" + c + " AS DECIMAL(18,4))" }
		q1cols := []string{"l_returnflag", "l_linestatus", "sum_qty", "sum_base_price", "sum_disc_price", "sum_charge",
			avg("avg_qty"), avg("avg_price"), avg("avg_disc"), "count_order"}
		want1 := textRows(t, db, q1, q1cols)
		got1 := textRows(t, db, "SELECT * FROM got_q1", q1cols)
		if len(want1) == 0 || want1 != got1 {
			t.Fatalf("batch %d (%d rows): Q1 incremental:\n%s\nDuckDB's Q1:\n%s", i, now, got1, want1)
		}
		want6 := textRows(t, db, q6, []string{"revenue"})
		got6 := textRows(t, db, "SELECT * FROM got_q6", []string{"revenue"})
		if want6 != got6 {
			t.Fatalf("batch %d: Q6 incremental %s, DuckDB's Q6 %s", i, got6, want6)
		}
		// Type-stable: the sums keep DuckDB's own types (DECIMAL(38,s)),
		// counts BIGINT, from the first batch to the last.
		for _, q := range []struct{ got, want string }{{"got_q1", q1}, {"got_q6", q6}} {
			gotCols, err := db.Describe(ctx, "SELECT * FROM "+q.got)
			if err != nil {
				t.Fatal(err)
			}
			wantCols, err := db.Describe(ctx, q.want)
			if err != nil {
				t.Fatal(err)
			}
			wantType := map[string]string{}
			for _, c := range wantCols {
				wantType[c.Name] = c.Type
			}
			for _, c := range gotCols {
				key := q.got + "." + c.Name
				if w, ok := wantType[c.Name]; ok && !strings.HasPrefix(c.Name, "avg_") && c.Type != w {
					t.Errorf("batch %d: %s is %s, DuckDB's answer has %s", i, key, c.Type, w)
				}
				if prev, ok := types[key]; ok && prev != c.Type {
					t.Errorf("batch %d: %s changed type: %s, then %s", i, key, prev, c.Type)
				}
				types[key] = c.Type
			}
		}
	}
	if landed != total {
		t.Fatalf("landed %d of %d lines", landed, total)
	}
	if rep := once(t, r, "tpch_q1"); !rep.NothingNew {
		t.Errorf("q1 with nothing new: %+v", rep)
	}
	// A replay from the start recomputes instead of adding the history to
	// the stored groups: after reset --full-refresh (the sink emptied) and
	// after a plain reset --to earliest alike.
	if _, err := r.ResetWith(ctx, "tpch_q1", "earliest", ResetOptions{FullRefresh: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reset(ctx, "tpch_q6", "earliest"); err != nil {
		t.Fatal(err)
	}
	loadSink(t, r, db, "gold.tpch_q1", "got_q1")
	if n, err := db.Count(ctx, "got_q1"); err != nil || n != 0 {
		t.Fatalf("tpch_q1 after reset --full-refresh: %d rows (%v), want none", n, err)
	}
	for _, task := range []string{"tpch_q1", "tpch_q6"} {
		if rep := once(t, r, task); rep.RowsIn != total {
			t.Fatalf("replay of %s read %d rows, want %d", task, rep.RowsIn, total)
		}
	}
	loadSink(t, r, db, "gold.tpch_q1", "got_q1")
	loadSink(t, r, db, "gold.tpch_q6", "got_q6")
	q1cols := []string{"l_returnflag", "l_linestatus", "sum_qty", "count_order"}
	if got, want := textRows(t, db, "SELECT * FROM got_q1", q1cols), textRows(t, db, q1, q1cols); got != want {
		t.Fatalf("Q1 after a replay:\n%s\nwant:\n%s", got, want)
	}
	if got, want := textRows(t, db, "SELECT * FROM got_q6", []string{"revenue"}), textRows(t, db, q6, []string{"revenue"}); got != want {
		t.Fatalf("Q6 after a replay: %s, want %s", got, want)
	}
}

// loadSink copies a lake table of r into db as the table name.
func loadSink(t *testing.T, r *Runner, db *duck.DB, table, name string) {
	t.Helper()
	loadTable(t, r, db, "lake", table, name)
}

// loadTable copies schema.table of connection conn into db as name.
func loadTable(t *testing.T, r *Runner, db *duck.DB, conn, table, name string) {
	t.Helper()
	ctx := testContext(t)
	src, err := r.source(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	schema, tbl, _ := strings.Cut(table, ".")
	info, err := src.Probe(ctx, routes.TableRef{Schema: schema, Name: tbl})
	if err != nil {
		t.Fatal(err)
	}
	s, err := incremental.ReadTable(ctx, src, info, r.opts.Budget, r.opts.Allocator)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Load(ctx, name, s); err != nil {
		t.Fatal(err)
	}
}

// textRows renders a query's columns (SQL expressions) as DuckDB text,
// one line per row, sorted.
func textRows(t *testing.T, db *duck.DB, query string, cols []string) string {
	t.Helper()
	cells := make([]string, len(cols))
	for i, c := range cols {
		cells[i] = "coalesce(CAST(" + c + " AS VARCHAR), 'NULL')"
	}
	line := "concat_ws('|', " + strings.Join(cells, ", ") + ")"
	var out *string
	q := "SELECT string_agg(" + line + ", chr(10) ORDER BY " + line + ") FROM (" + query + ")"
	if err := db.QueryRow(testContext(t), q, &out); err != nil {
		t.Fatal(err)
	}
	if out == nil {
		return ""
	}
	return *out
}
