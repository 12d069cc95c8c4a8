package runner

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/routes"
)

const aggYAML = `  inc:
    model:
      source: lake:bronze.orders
      sink: lake:gold.inc
      sql: SELECT customer_id AS g, CASE WHEN status = 'paid' THEN CAST(amount AS DECIMAL(12,2)) END AS a, status FROM input
      aggregate:
        group_by: [g]
        measures:
          n: count(*)
          na: count(a)
          lo: min(a)
          hi: max(a)
          s: sum(a)
          mean: {agg: avg(a), type: "DECIMAL(18,4)"}
  full:
    model:
      source: lake:bronze.orders
      sink: lake:gold.full
      mode: replace
      sql: SELECT customer_id AS g, CASE WHEN status = 'paid' THEN CAST(amount AS DECIMAL(12,2)) END AS a, status FROM input
      aggregate:
        group_by: [g]
        measures: {n: count(*), na: count(a), lo: min(a), hi: max(a), s: sum(a), mean: {agg: avg(a), type: "DECIMAL(18,4)"}, statuses: count_distinct(status)}
  total:
    model:
      source: lake:bronze.orders
      sink: lake:gold.total
      sql: SELECT CASE WHEN status = 'paid' THEN CAST(amount AS DECIMAL(12,2)) END AS a FROM input
      aggregate: {group_by: [], measures: {n: count(*), s: sum(a), lo: min(a), hi: max(a)}}
`

// TestAggregate_MergesLikeRecompute: every measure of an incremental
// aggregate (count(*), count(x), min, max, sum, avg — over a column that
// is NULL in some rows and in whole groups of a batch) merged batch by
// batch equals the same aggregate recomputed over the whole table (mode:
// replace, which also allows count_distinct), after each of several
// batches, on an Iceberg and a PostgreSQL sink; a global aggregate
// (group_by: []) keeps exactly one row.
func TestAggregate_MergesLikeRecompute(t *testing.T) {
	t.Run("iceberg", func(t *testing.T) {
		d := newLakeDAG(t, "warn")
		body, _ := readFile(d.path)
		writeFile(t, d.path, body+aggYAML)
		checkAggregates(t, d.runner(t), "lake", "gold.", func(last int) { d.orders(t, 1, last) })
	})
	t.Run("postgres", func(t *testing.T) {
		d := newPGDAG(t, medallionYAML+strings.NewReplacer("lake:bronze.", "pg:S.bronze_", "lake:gold.", "pg:S.gold_").Replace(aggYAML))
		landed := 0
		checkAggregates(t, d.runner(t), "pg", d.s+".gold_", func(last int) {
			d.insertOrders(t, landed+1, last-landed)
			landed = last
		})
	})
}

func checkAggregates(t *testing.T, r *Runner, conn, prefix string, land func(last int)) {
	ctx := testContext(t)
	db, err := duck.Open(ctx, duck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cols := []string{"g", "n", "na", "lo", "hi", "s", "mean"}
	for i, last := range []int{3, 10, 11, 40, 77} {
		land(last)
		once(t, r, "bronze_orders")
		for _, task := range []string{"inc", "full", "total"} {
			if rep := once(t, r, task); rep.Error != "" {
				t.Fatalf("batch %d: %s: %+v", i, task, rep)
			}
		}
		loadTable(t, r, db, conn, prefix+"inc", "got_inc")
		loadTable(t, r, db, conn, prefix+"full", "got_full")
		loadTable(t, r, db, conn, prefix+"total", "got_total")
		got, want := textRows(t, db, "SELECT * FROM got_inc", cols), textRows(t, db, "SELECT * FROM got_full", cols)
		if got != want || !strings.Contains(want, "|") {
			t.Fatalf("batch %d (orders 1..%d): incremental:\n%s\nrecomputed:\n%s", i, last, got, want)
		}
		tot := textRows(t, db, "SELECT * FROM got_total", []string{"n", "s", "lo", "hi"})
		wantTot := textRows(t, db, "SELECT sum(n) AS n, sum(s) AS s, min(lo) AS lo, max(hi) AS hi FROM got_full", []string{"n", "s", "lo", "hi"})
		if tot != wantTot || !strings.HasPrefix(tot, fmt.Sprint(last)+"|") {
			t.Fatalf("batch %d: total %q, want %q (one row, n = %d)", i, tot, wantTot, last)
		}
	}
}

// TestAggregate_BadInputAtRun: what lint reports as MODEL-005 is refused
// by the run too (exit 2, naming the dagfile's line), before a row is
// written: lint cannot bind a model whose input it does not know.
func TestAggregate_BadInputAtRun(t *testing.T) {
	for _, c := range []struct{ agg, want string }{
		{"{group_by: [customer], measures: {s: sum(amount)}}", `group_by column "customer" is not a column of the SQL's output`},
		{"{group_by: [id], measures: {s: sum(status)}}", "sum(status) needs a number, and status is VARCHAR"},
		{"{group_by: [id], measures: {s: avg(nope)}}", `column "nope" is not a column`},
		{"{group_by: [id], measures: {id: count(*)}}", `measure name "id" is taken`},
		{"{group_by: [id], measures: {ID: count(*)}}", `measure name "ID" is taken`},
		{"{group_by: [id], measures: {m: avg(amount), _WEIR_SUM_m: sum(amount)}}", `is taken`},
		{"{group_by: [id], measures: {_Weir_Count_x: count(*)}}", `is taken`},
		{"{group_by: [id], measures: {s: sum(amount), S: count(*)}}", `is taken`},
		{"{group_by: [_weir_sum_m], measures: {m: avg(amount)}}", `measure name "m" is taken`},
	} {
		d := newLakeDAG(t, "warn")
		body, _ := readFile(d.path)
		writeFile(t, d.path, body+"  bad:\n    model:\n      source: lake:bronze.orders\n      sink: lake:gold.bad\n      sql: SELECT id, amount, status, id AS _weir_sum_m FROM input\n      aggregate: "+c.agg+"\n")
		r := d.runner(t)
		d.orders(t, 1, 10)
		once(t, r, "bronze_orders")
		_, err := r.Once(testContext(t), "bad")
		if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), d.path+":") {
			t.Errorf("%s: %v, want bad input at %s saying %q", c.agg, err, d.path, c.want)
		}
		if rows := lakeTableExists(t, r, "gold.bad"); rows {
			t.Errorf("%s: the sink was created", c.agg)
		}
	}
}

// lakeTableExists reports whether the lake has the table.
func lakeTableExists(t *testing.T, r *Runner, table string) bool {
	t.Helper()
	ctx := testContext(t)
	src, err := r.source(ctx, "lake")
	if err != nil {
		t.Fatal(err)
	}
	schema, name, _ := strings.Cut(table, ".")
	_, err = src.Probe(ctx, routes.TableRef{Schema: schema, Name: name})
	if errors.Is(err, routes.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}
