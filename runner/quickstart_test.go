package runner

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

// copyQuickstart copies examples/quickstart (without a lake) to a temp dir.
func copyQuickstart(t *testing.T) string {
	t.Helper()
	src, dst := filepath.Join("..", "examples", "quickstart"), t.TempDir()
	for _, name := range []string{"weir.yaml", "data/orders.csv", "data/customers.csv", "models/silver_orders.sql",
		"models/gold_revenue_by_country.sql", "contracts/silver_orders.yaml", "contracts/gold_revenue_by_country.yaml"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dst, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dst, "weir.yaml")
}

// TestQuickstart runs examples/quickstart as the README says (no server):
// one pass, then status; the contract quarantines the bundled bad rows.
func TestQuickstart(t *testing.T) {
	path := copyQuickstart(t)
	r, err := Load(path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	reps := pass(t, r)
	silver := reps["silver_orders"]
	if silver.RowsIn != 8000 || silver.Quarantined == 0 || silver.RowsOut+silver.Quarantined != 8000 {
		t.Fatalf("silver_orders: %+v", silver)
	}
	if gold := reps["gold_revenue_by_country"]; gold.RowsOut != 8 {
		t.Fatalf("gold_revenue_by_country wrote %d rows, want one per country (8)", gold.RowsOut)
	}
	for _, st := range r.Status(testContext(t), mustSelect(t, r)) {
		if st.Error != "" || st.Lag != 0 {
			t.Errorf("status %s: %+v", st.Task, st)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "lake", "catalog.db")); err != nil {
		t.Errorf("the lake is not next to the dagfile: %v", err)
	}
	if rep := once(t, r, "silver_orders"); !rep.NothingNew {
		t.Errorf("a second silver run: %+v", rep)
	}
}

// TestQuickstart_IncrementalGold: the quickstart's gold merges each new
// batch of silver into its stored totals (the view this, mode upsert);
// after three appends to the orders file it must equal gold computed in
// one run over the final file, and a gold run with nothing new in silver
// writes nothing.
func TestQuickstart_IncrementalGold(t *testing.T) {
	path := copyQuickstart(t)
	csv := filepath.Join(filepath.Dir(path), "data", "orders.csv")
	all, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(all), "\n")
	r, err := Load(path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i, n := range []int{5001, 6001, 7001, len(lines)} { // header + orders
		writeFile(t, csv, strings.Join(lines[:n], ""))
		reps := pass(t, r)
		if gold := reps["gold_revenue_by_country"]; gold.Error != "" || (i > 0 && gold.RowsIn >= 5000) {
			t.Fatalf("cycle %d: gold read %d rows (it must read only silver's new rows): %+v", i, gold.RowsIn, gold)
		}
	}
	if rep := once(t, r, "gold_revenue_by_country"); !rep.NothingNew {
		t.Errorf("gold with nothing new in silver: %+v", rep)
	}
	fresh := copyQuickstart(t)
	rf, err := Load(fresh, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	pass(t, rf)
	got, want := lakeRows(t, r, "gold.revenue_by_country"), lakeRows(t, rf, "gold.revenue_by_country")
	if len(want) != 8 || !slices.Equal(got, want) {
		t.Fatalf("incremental gold:\n%s\nfull recompute:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A replay from the start recomputes (this is empty): it must not add
	// the history to the stored totals a second time.
	if _, err := r.Reset(testContext(t), "gold_revenue_by_country", "earliest"); err != nil {
		t.Fatal(err)
	}
	if rep := once(t, r, "gold_revenue_by_country"); rep.RowsIn < 7000 {
		t.Fatalf("replay from earliest read %d rows: %+v", rep.RowsIn, rep)
	}
	if got := lakeRows(t, r, "gold.revenue_by_country"); !slices.Equal(got, want) {
		t.Fatalf("gold after reset --to earliest and a run:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRunner_ThisNeedsContractFirst: before its sink exists, a model that
// reads this takes this's columns from its contract; without one the run
// fails as bad input, saying so, and commits nothing.
func TestRunner_ThisNeedsContractFirst(t *testing.T) {
	d := newLakeDAG(t, "warn")
	body, _ := readFile(d.path)
	writeFile(t, d.path, body+`  totals:
    model:
      source: lake:bronze.orders
      sink: lake:gold.totals
      mode: upsert
      key: [k]
      sql: SELECT 1 AS k, count(*) + coalesce((SELECT max(n) FROM this), 0) AS n FROM input
`)
	r := d.runner(t)
	d.orders(t, 1, 10)
	once(t, r, "bronze_orders")
	_, err := r.Once(testContext(t), "totals")
	if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "contract") {
		t.Fatalf("this before the sink exists, no contract: %v", err)
	}
	writeFile(t, d.path, body+`  totals:
    model:
      source: lake:bronze.orders
      sink: lake:gold.totals
      mode: upsert
      key: [k]
      sql: SELECT 1 AS k, count(*) + coalesce((SELECT max(n) FROM this), 0) AS n FROM input
    contract: {columns: [{name: k, type: INTEGER}, {name: n, type: BIGINT}]}
`)
	r = d.runner(t)
	once(t, r, "totals")
	d.orders(t, 1, 25)
	once(t, r, "bronze_orders")
	once(t, r, "totals")
	if got := lakeRows(t, r, "gold.totals"); !slices.Equal(got, []string{"1,25"}) {
		t.Fatalf("totals after 10 + 15 orders: %v, want [1,25]", got)
	}
}

// lakeRows reads a table of the quickstart's lake as sorted text rows.
func lakeRows(t *testing.T, r *Runner, table string) []string {
	t.Helper()
	ctx := testContext(t)
	src, err := r.source(ctx, "lake")
	if err != nil {
		t.Fatal(err)
	}
	schema, name, _ := strings.Cut(table, ".")
	info, err := src.Probe(ctx, routes.TableRef{Schema: schema, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	s, err := incremental.ReadTable(ctx, src, info, r.opts.Budget, r.opts.Allocator)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	var rows []string
	for s.Next() {
		rec := s.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			var cells []string
			for _, col := range rec.Columns() {
				cells = append(cells, col.ValueStr(i))
			}
			rows = append(rows, strings.Join(cells, ","))
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(rows)
	return rows
}

// TestRunner_MissingSource: a model whose source table does not exist yet
// (its upstream has not loaded anything) has nothing to do; it does not fail.
func TestRunner_MissingSource(t *testing.T) {
	r := newLakeDAG(t, "warn").runner(t)
	if rep := once(t, r, "silver_log"); !rep.NothingNew {
		t.Fatalf("a model over a missing table: %+v", rep)
	}
	sts := r.Status(testContext(t), mustSelect(t, r))
	for _, st := range sts {
		if st.Task == "silver_log" && (len(st.Sources) != 1 || !st.Sources[0].Missing) {
			t.Fatalf("status of silver_log: %+v", st)
		}
	}
}
