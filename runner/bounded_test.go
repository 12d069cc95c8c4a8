package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/routes"
)

// pagedYAML: orders in PostgreSQL, copied to an Iceberg lake in one
// snapshot (two pipes: several data files); a model pages through each
// source by max_batch_rows (paged_*), and the same SQL without a bound
// recomputes it whole (whole_*).
const pagedYAML = `version: 1
connections:
  pg: ${WEIR_TEST_PG}
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  bronze:
    transfer: {from: pg, table: S.app_orders, to: lake, dest_table: bronze.orders, mode: append}
  paged_lake:
    model: {source: lake:bronze.orders, sink: lake:silver.paged, mode: append, max_batch_rows: MAX, sql: "SELECT id, amount, status FROM input"}
  whole_lake:
    model: {source: lake:bronze.orders, sink: lake:silver.whole, mode: append, sql: "SELECT id, amount, status FROM input"}
  paged_pg:
    model: {source: pg:S.app_orders, sink: pg:S.paged, mode: append, max_batch_rows: MAX, sql: "SELECT id, amount, status FROM input"}
  whole_pg:
    model: {source: pg:S.app_orders, sink: pg:S.whole, mode: append, sql: "SELECT id, amount, status FROM input"}
`

const pagedRows = 1000

// newPagedDAG loads pagedRows orders into the app table and the lake.
func newPagedDAG(t *testing.T, maxRows int) (*pgDAG, *Runner) {
	d := newPGDAG(t, strings.ReplaceAll(pagedYAML, "MAX", itoa(maxRows)))
	r := d.runner(t)
	d.insertOrders(t, 1, pagedRows)
	once(t, r, "bronze")
	return d, r
}

// sinkRows reads a paged or whole sink's rows, sorted.
func sinkRows(t *testing.T, d *pgDAG, r *Runner, src, which string) []string {
	t.Helper()
	var rows []string
	if src == "lake" {
		rows = lakeRows(t, r, "silver."+which)
	} else {
		q := fmt.Sprintf("SELECT id::text || ',' || amount::text || ',' || coalesce(status, 'NULL') FROM %s.%s", d.s, which)
		rs, err := d.fx.Pool.Query(testContext(t), q)
		if err != nil {
			t.Fatal(err)
		}
		for rs.Next() {
			var s string
			if err := rs.Scan(&s); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, s)
		}
		rs.Close()
	}
	slices.Sort(rows)
	return rows
}

// countCommits counts the sink commits of fn (the destinations'
// "commit" checkpoint).
func countCommits(fn func()) int {
	n := 0
	restore := routes.SetCheckpointHook(func(phase string) error {
		if phase == "commit" {
			n++
		}
		return nil
	})
	defer restore()
	fn()
	return n
}

// sameRows fails unless got equals the whole recompute, with pagedRows
// rows and no id twice.
func sameRows(t *testing.T, what string, got, whole []string) {
	t.Helper()
	ids := map[string]bool{}
	for _, r := range got {
		id, _, _ := strings.Cut(r, ",")
		if ids[id] {
			t.Fatalf("%s: id %s twice", what, id)
		}
		ids[id] = true
	}
	if len(got) != pagedRows || !slices.Equal(got, whole) {
		t.Fatalf("%s: %d rows, want the whole recompute's %d (equal: %v)", what, len(got), len(whole), slices.Equal(got, whole))
	}
}

// TestRunner_FirstRunPaged: one run over a source of N rows (a single
// Iceberg snapshot; a PostgreSQL table) with max_batch_rows N/10 (and a
// bound that does not divide N) commits at least 10 times, each batch
// with its offsets, and ends equal to the same SQL recomputed whole.
func TestRunner_FirstRunPaged(t *testing.T) {
	for _, maxRows := range []int{pagedRows / 10, 97} {
		d, r := newPagedDAG(t, maxRows)
		for _, src := range []string{"lake", "pg"} {
			t.Run(fmt.Sprintf("%s/max%d", src, maxRows), func(t *testing.T) {
				var rep *Report
				commits := countCommits(func() { rep = once(t, r, "paged_"+src) })
				if want := (pagedRows + maxRows - 1) / maxRows; commits < want {
					t.Fatalf("one first run of %d rows with max_batch_rows %d committed %d times, want at least %d (report %+v)", pagedRows, maxRows, commits, want, rep)
				}
				if rep.RowsIn != pagedRows {
					t.Fatalf("the run read %d rows, want %d", rep.RowsIn, pagedRows)
				}
				once(t, r, "whole_"+src)
				sameRows(t, src, sinkRows(t, d, r, src, "paged"), sinkRows(t, d, r, src, "whole"))
				if rep := once(t, r, "paged_"+src); !rep.NothingNew {
					t.Fatalf("a run after the first: %+v, want nothing new", rep)
				}
			})
		}
	}
}

// TestRunner_FirstRunPagedResumes: a first run that fails inside the
// sink's commit of its k-th batch (the fault seam; the commit rolls back
// as a killed process's would) leaves the batches before it committed,
// each whole; the next run resumes after them. After several such
// failures at different batches, the sink equals the whole recompute:
// no row twice, none lost (count and every row compared).
func TestRunner_FirstRunPagedResumes(t *testing.T) {
	const maxRows = 100
	d, r := newPagedDAG(t, maxRows)
	errKilled := errors.New("killed at commit")
	for _, src := range []string{"lake", "pg"} {
		t.Run(src, func(t *testing.T) {
			prev := 0
			for round, k := range []int{3, 1, 4, 2, 1} {
				n := 0
				restore := routes.SetCheckpointHook(func(phase string) error {
					if phase == "commit" {
						if n++; n == k {
							return errKilled
						}
					}
					return nil
				})
				_, err := r.Once(testContext(t), "paged_"+src)
				restore()
				if !errors.Is(err, errKilled) {
					t.Fatalf("round %d: the run did not fail at commit %d: %v", round, k, err)
				}
				got := len(sinkRows(t, d, r, src, "paged"))
				if want := prev + (k-1)*maxRows; got != want {
					t.Fatalf("round %d: killed at batch %d after %d rows: the sink has %d rows, want %d (the batches before, each whole)", round, k, prev, got, want)
				}
				prev = got
			}
			once(t, r, "paged_"+src)
			once(t, r, "whole_"+src)
			sameRows(t, src, sinkRows(t, d, r, src, "paged"), sinkRows(t, d, r, src, "whole"))
		})
	}
}

// TestWholeReason_Plans: the SQL shapes that give other rows batch by
// batch than over the whole input (windows, aggregates, DISTINCT, LIMIT,
// samples) run whole; row-wise SQL (projections, filters, unnests, CASE,
// a join to a lookup, a UNION ALL of per-row transforms) and SQL that
// merges with this or declares aggregate: run batch by batch.
func TestWholeReason_Plans(t *testing.T) {
	ctx := testContext(t)
	db, err := duck.Open(ctx, duck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE TEMP TABLE input (id BIGINT, amount DECIMAL(12,2), status VARCHAR, tags VARCHAR[])",
		"CREATE TEMP TABLE c (id BIGINT, country VARCHAR)",
		"CREATE TEMP TABLE this (status VARCHAR, n BIGINT)",
	} {
		if err := db.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		sql   string
		whole bool
	}{
		{"SELECT id, amount FROM input", false},
		{"SELECT id, lower(status) AS s FROM input WHERE amount > 0 ORDER BY id", false},
		{"SELECT id, unnest(tags) AS tag FROM input", false},
		{"SELECT i.id, c.country FROM input i LEFT JOIN c ON c.id = i.id", false},
		{"SELECT id FROM input WHERE amount > 0 UNION ALL SELECT id FROM input WHERE amount < 0", false},
		{"SELECT CASE WHEN amount > 10 THEN 'big' ELSE 'small' END AS size, id FROM input", false},
		{"SELECT status, count(*) AS n FROM input GROUP BY status", true},
		{"SELECT count(*) AS n FROM input", true},
		{"SELECT DISTINCT status FROM input", true},
		{"SELECT id, row_number() OVER (ORDER BY id) AS rn FROM input", true},
		{"SELECT id, sum(amount) OVER (PARTITION BY status) AS s FROM input", true},
		{"SELECT id FROM input LIMIT 10", true},
		{"SELECT id FROM input ORDER BY amount DESC LIMIT 3", true},
		{"SELECT id FROM input USING SAMPLE 10%", true},
		{"SELECT id FROM input WHERE amount > (SELECT avg(amount) FROM input)", true},
	}
	for _, c := range cases {
		read, err := db.TablesRead(ctx, c.sql)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := rawPlan(ctx, db, c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if why := wholeReason(&dagfile.Model{}, read, plan); (why != "") != c.whole {
			t.Errorf("%s: whole reason %q, want whole=%v; plan:\n%s", c.sql, why, c.whole, plan)
		}
		if why := wholeReason(&dagfile.Model{Aggregate: &dagfile.Aggregate{}}, read, plan); why != "" {
			t.Errorf("%s with aggregate: declared: whole reason %q, want none", c.sql, why)
		}
	}
	merge := "SELECT i.status, count(*) + coalesce(max(t.n), 0) AS n FROM input i LEFT JOIN this t USING (status) GROUP BY i.status"
	read, err := db.TablesRead(ctx, merge)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := db.Plan(ctx, merge)
	if err != nil {
		t.Fatal(err)
	}
	if why := wholeReason(&dagfile.Model{}, read, plan); why != "" {
		t.Errorf("a merge with this: whole reason %q, want none", why)
	}
}

// TestDefaultBatchRows_MemoryRule: the default batch is the budget over
// 8 row widths, at least 10,000 rows; the docs' example (the bench's
// orders at 1 GiB) holds.
func TestDefaultBatchRows_MemoryRule(t *testing.T) {
	orders := arrow.NewSchema([]arrow.Field{
		{Name: "order_id", Type: arrow.PrimitiveTypes.Int64}, {Name: "customer_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}}, {Name: "status", Type: arrow.BinaryTypes.String},
		{Name: "ordered_at", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
	}, nil)
	if got := DefaultBatchRows(1<<30, orders); got != (1<<30)/(8*77) {
		t.Fatalf("orders at 1 GiB: %d rows a batch, want %d (77 bytes a row)", got, (1<<30)/(8*77))
	}
	if got := DefaultBatchRows(1<<20, orders); got != minBatchRows {
		t.Fatalf("a tiny budget: %d rows, want the floor %d", got, minBatchRows)
	}
	if got := DefaultBatchRows(1<<30, arrow.NewSchema(nil, nil)); got != (1<<30)/8 {
		t.Fatalf("no columns: %d", got)
	}
	if got := engineMemoryLimit(1 << 30); got != "512MB" {
		t.Fatalf("memory_limit of 1 GiB: %s, want 512MB", got)
	}
}
