package runner

import (
	"errors"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
)

// TestRunner_ResetEarliestReplays: reset --to earliest replays every row:
// an append model adds them again, an upsert model rewrites them unchanged
// (and its quarantine is not duplicated).
func TestRunner_ResetEarliestReplays(t *testing.T) {
	d := newPGDAG(t, medallionYAML)
	r := d.runner(t)
	d.insertOrders(t, 1, 60)
	pass(t, r)
	silver, quarantine := d.hash(t, "silver_orders", "id"), d.count(t, "silver_orders__quarantine")
	for _, task := range []string{"silver_log", "silver_orders"} {
		rep, err := r.Reset(testContext(t), task, "earliest")
		if err != nil {
			t.Fatal(err)
		}
		if off := rep.Offsets["input"]; off.From != "60" || off.To != "" || rep.Lag != 60 {
			t.Fatalf("reset %s: %+v", task, rep)
		}
		if rep := once(t, r, task); rep.RowsIn != 60 {
			t.Fatalf("replay of %s read %d rows, want 60", task, rep.RowsIn)
		}
	}
	if got := d.count(t, "silver_log"); got != 120 {
		t.Errorf("silver_log after an append replay: %d rows, want 120", got)
	}
	if got := d.hash(t, "silver_orders", "id"); got != silver {
		t.Errorf("upsert replay changed silver_orders: %s, was %s", got, silver)
	}
	if got := d.count(t, "silver_orders__quarantine"); got != quarantine {
		t.Errorf("replay quarantined again: %d rows, was %d", got, quarantine)
	}
}

// TestRunner_ResetTo: reset to latest skips what is there, to an offset
// reads on after it.
func TestRunner_ResetTo(t *testing.T) {
	d := newPGDAG(t, medallionYAML)
	r := d.runner(t)
	d.insertOrders(t, 1, 50)
	once(t, r, "bronze_orders")
	if _, err := r.Reset(testContext(t), "silver_log", "latest"); err != nil {
		t.Fatal(err)
	}
	if rep := once(t, r, "silver_log"); !rep.NothingNew || d.count(t, "silver_log") != 0 {
		t.Fatalf("after reset to latest: %+v", rep)
	}
	if _, err := r.Reset(testContext(t), "silver_log", "40"); err != nil {
		t.Fatal(err)
	}
	if rep := once(t, r, "silver_log"); rep.RowsIn != 10 {
		t.Fatalf("after reset to 40: read %d rows, want 10", rep.RowsIn)
	}
	if _, err := r.Reset(testContext(t), "gold_country", "7"); !errors.Is(err, routes.ErrBadInput) {
		t.Fatalf("reset of a two-source model to an offset: %v", err)
	}
	if _, err := r.Reset(testContext(t), "bronze_orders", "earliest"); !errors.Is(err, routes.ErrBadInput) {
		t.Fatalf("reset of a transfer: %v", err)
	}
}

// TestRunner_StartLatest: a new task with start: latest skips history and
// reads only what arrives after its first run.
func TestRunner_StartLatest(t *testing.T) {
	body := strings.Replace(medallionYAML, `mode: append, sql: "SELECT id, amount FROM input"}`,
		`mode: append, start: latest, sql: "SELECT id, amount FROM input"}`, 1)
	d := newPGDAG(t, body)
	r := d.runner(t)
	d.insertOrders(t, 1, 40)
	once(t, r, "bronze_orders")
	if rep := once(t, r, "silver_log"); rep.RowsIn != 0 || rep.Offsets["input"].To != "40" {
		t.Fatalf("first run with start: latest: %+v", rep)
	}
	d.insertOrders(t, 41, 5)
	once(t, r, "bronze_orders")
	if rep := once(t, r, "silver_log"); rep.RowsIn != 5 || d.count(t, "silver_log") != 5 {
		t.Fatalf("second run: %+v, %d rows in the sink", rep, d.count(t, "silver_log"))
	}
}

// TestRunner_MaxBatchRows: max_batch_rows splits a backlog into batches,
// which one run reads and commits one after another up to the head it saw.
func TestRunner_MaxBatchRows(t *testing.T) {
	body := strings.Replace(medallionYAML, `mode: append, sql: "SELECT id, amount FROM input"}`,
		`mode: append, max_batch_rows: 30, sql: "SELECT id, amount FROM input"}`, 1)
	d := newPGDAG(t, body)
	r := d.runner(t)
	d.insertOrders(t, 1, 100)
	once(t, r, "bronze_orders")
	var got []int64
	commits := countCommits(func() {
		for range 2 {
			rep := once(t, r, "silver_log")
			got = append(got, rep.RowsIn, int64(rep.Batches))
		}
	})
	if want := []int64{100, 4, 0, 1}; !equalInts(got, want) || commits != 4 {
		t.Fatalf("rows and batches of two runs with max_batch_rows 30: %v, want %v; %d commits, want 4", got, want, commits)
	}
	if n := d.count(t, "silver_log"); n != 100 {
		t.Fatalf("silver_log has %d rows, want 100", n)
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRunner_Contract: bad rows land in <sink>__quarantine with their
// reasons and the run id; above max_bad_ratio nothing is committed.
func TestRunner_Contract(t *testing.T) {
	d := newPGDAG(t, medallionYAML)
	r := d.runner(t)
	d.insertOrders(t, 1, 40)
	once(t, r, "bronze_orders")
	rep := once(t, r, "silver_orders")
	var reasons, runs string
	err := d.fx.Pool.QueryRow(testContext(t), "SELECT string_agg(id || ':' || _weir_reason, ',' ORDER BY id), string_agg(DISTINCT _weir_run, ',') FROM "+d.s+".silver_orders__quarantine").Scan(&reasons, &runs)
	if err != nil {
		t.Fatal(err)
	}
	if want := "11:accepted_values(status),22:accepted_values(status),33:accepted_values(status)"; reasons != want || runs != rep.RunID {
		t.Fatalf("quarantine: %q (runs %q), want %q (run %s)", reasons, runs, want, rep.RunID)
	}
	d.fx.Exec(t, testContext(t), "INSERT INTO "+d.s+".app_orders SELECT g, 1, 5, 'Lost' FROM generate_series(41, 100) g")
	once(t, r, "bronze_orders")
	if c := rep.Contract; c == nil || c.Rules["accepted_values(status)"] != 3 || len(c.Rules) != 1 {
		t.Errorf("contract result %+v, want rules accepted_values(status): 3", c)
	}
	before := d.hash(t, "silver_orders", "id")
	rep, err = r.Once(testContext(t), "silver_orders")
	if err == nil || !strings.Contains(err.Error(), "max_bad_ratio") {
		t.Fatalf("a batch of 60 bad rows: %v", err)
	}
	if c := rep.Contract; c == nil || c.Rules["accepted_values(status)"] != 60 || c.Passed {
		t.Errorf("the failed run's contract result %+v, want rules accepted_values(status): 60, not passed", c)
	}
	if d.hash(t, "silver_orders", "id") != before || d.count(t, "silver_orders__quarantine") != 3 {
		t.Fatal("a failed contract committed something")
	}
}

// TestRunner_OnChangePostgres: rows deleted below the committed offset are
// reported (warn) or fail the run (error).
func TestRunner_OnChangePostgres(t *testing.T) {
	d := newPGDAG(t, medallionYAML)
	r := d.runner(t)
	d.insertOrders(t, 1, 30)
	once(t, r, "bronze_orders")
	once(t, r, "silver_log")
	d.fx.Exec(t, testContext(t), "DELETE FROM "+d.s+".bronze_orders WHERE id <= 5")
	d.insertOrders(t, 31, 5)
	once(t, r, "bronze_orders")
	rep := once(t, r, "silver_log")
	if len(rep.Changes) != 1 || !strings.Contains(rep.Changes[0], "5 rows at or below the committed offset 30 were deleted") {
		t.Fatalf("changes: %q", rep.Changes)
	}
	if rep.RowsIn != 5 {
		t.Fatalf("read %d rows, want the 5 new ones", rep.RowsIn)
	}
	body := strings.Replace(medallionYAML, `mode: append, sql: "SELECT id, amount FROM input"}`,
		`mode: append, on_change: error, sql: "SELECT id, amount FROM input"}`, 1)
	e := newPGDAG(t, body)
	re := e.runner(t)
	e.insertOrders(t, 1, 30)
	once(t, re, "bronze_orders")
	once(t, re, "silver_log")
	e.fx.Exec(t, testContext(t), "DELETE FROM "+e.s+".bronze_orders WHERE id = 3")
	if _, err := re.Once(testContext(t), "silver_log"); err == nil || !strings.Contains(err.Error(), "on_change: error") {
		t.Fatalf("on_change: error: %v", err)
	}
}

// TestRunner_OnChangeIceberg: a snapshot that deletes rows (a replace of
// the bronze table) is reported, and fails the run with on_change: error.
func TestRunner_OnChangeIceberg(t *testing.T) {
	d := newLakeDAG(t, "error")
	r := d.runner(t)
	d.orders(t, 1, 30)
	once(t, r, "bronze_orders")
	once(t, r, "silver_orders")
	body, _ := readFile(d.path)
	writeFile(t, d.path, strings.Replace(body, "dest_table: bronze.orders, mode: append, cursor: id", "dest_table: bronze.orders", 1))
	r2 := d.runner(t)
	d.orders(t, 1, 20)
	once(t, r2, "bronze_orders") // an overwrite: rows 21..30 deleted
	_, err := r2.Once(testContext(t), "silver_orders")
	if err == nil || !strings.Contains(err.Error(), "deleted or rewrote rows") {
		t.Fatalf("on_change after an overwrite: %v", err)
	}
}

// TestRunner_MultiSourceOffsets: an incremental model over two sources
// (declared independent: its SQL never joins them) keeps one offset per
// source, committed together.
func TestRunner_MultiSourceOffsets(t *testing.T) {
	body := medallionYAML + `  both:
    model:
      sources: {a: pg:S.bronze_orders, b: pg:S.bronze_customers}
      sink: pg:S.both
      mode: append
      independent: true
      sql: SELECT 'order' AS kind, id FROM a UNION ALL SELECT 'customer', id FROM b
`
	d := newPGDAG(t, body)
	r := d.runner(t)
	d.insertOrders(t, 1, 20)
	once(t, r, "bronze_orders")
	once(t, r, "bronze_customers")
	if rep := once(t, r, "both"); rep.RowsOut != 25 {
		t.Fatalf("first run wrote %d rows, want 25", rep.RowsOut)
	}
	d.insertOrders(t, 21, 3)
	once(t, r, "bronze_orders")
	rep := once(t, r, "both")
	if rep.RowsOut != 3 || rep.Offsets["a"].From != "20" || rep.Offsets["a"].To != "23" || rep.Offsets["b"].To != "5" {
		t.Fatalf("second run: %+v", rep)
	}
	var pos string
	if err := d.fx.Pool.QueryRow(testContext(t), "SELECT position FROM "+d.s+"._weir_state WHERE source = 'task:both'").Scan(&pos); err != nil || pos != "a=23&a.rows=23&b=5&b.rows=5" {
		t.Fatalf("committed position %q, %v", pos, err)
	}
}
