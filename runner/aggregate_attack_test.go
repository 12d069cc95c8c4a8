package runner

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/routes"
)

// attackRows is a model SQL whose rows have two customers in one group, a
// second key column whose value is shared across groups, text with non-ASCII
// letters, timestamps, a column NULL in every row of the early batches,
// and BIGINT values whose sum passes BIGINT.
const attackRows = `SELECT CASE WHEN customer_id IN (3, 5) THEN -1 ELSE customer_id END AS g,
  CASE WHEN id % 4 = 0 THEN 'none' ELSE lower(status) END AS k,
  CASE id % 5 WHEN 0 THEN 'Ábc' WHEN 1 THEN 'zeta' WHEN 2 THEN 'émile' WHEN 3 THEN '日本' ELSE 'Zürich' END AS name,
  TIMESTAMP '2020-01-01 00:00:00' + to_hours(CAST((id * 37) % 101 AS BIGINT)) AS ts,
  CASE WHEN id > 20 THEN CAST(amount AS DECIMAL(12,2)) END AS late,
  CAST(9000000000000000000 - id AS BIGINT) AS big
  FROM input`

const attackMeasures = `{n: count(*), nl: count(late), lo: min(name), hi: max(name), t0: min(ts), t1: max(ts), llo: min(late), lhi: max(late), ls: sum(late), la: avg(late), bs: sum(big)}`

func attackYAML(prefix string) string {
	var b strings.Builder
	for _, m := range []struct{ name, mode, by string }{
		{"nk_inc", "", "[g]"}, {"nk_full", "mode: replace", "[g]"},
		{"nk2_inc", "", "[g, k]"}, {"nk2_full", "mode: replace", "[g, k]"},
	} {
		b.WriteString("  " + m.name + ":\n    model:\n      source: " + prefix + "bronze.orders\n      sink: " + prefix + "gold." + m.name + "\n")
		if m.mode != "" {
			b.WriteString("      " + m.mode + "\n")
		}
		b.WriteString("      sql: \"" + strings.ReplaceAll(attackRows, "\n", " ") + "\"\n")
		b.WriteString("      aggregate: {group_by: " + m.by + ", measures: " + attackMeasures + "}\n")
	}
	return b.String()
}

// TestAggregate_Types: on a one- and a two-column key, every measure over
// text (non-ASCII), timestamps, a
// column NULL in whole batches and BIGINT sums merges to what a recompute
// gives, batch after batch (one of them empty).
func TestAggregate_Types(t *testing.T) {
	t.Run("iceberg", func(t *testing.T) {
		d := newLakeDAG(t, "warn")
		body, _ := readFile(d.path)
		writeFile(t, d.path, body+attackYAML("lake:"))
		checkAttack(t, d.runner(t), "lake", "gold.", func(last int) { d.orders(t, 1, last) })
	})
	t.Run("postgres", func(t *testing.T) {
		d := newPGDAG(t, medallionYAML+strings.NewReplacer("pg:bronze.", "pg:S.bronze_", "pg:gold.", "pg:S.gold_").Replace(attackYAML("pg:")))
		landed := 0
		checkAttack(t, d.runner(t), "pg", d.s+".gold_", func(last int) {
			if last > landed {
				d.insertOrders(t, landed+1, last-landed)
			}
			landed = last
		})
	})
}

func checkAttack(t *testing.T, r *Runner, conn, prefix string, land func(last int)) {
	ctx := testContext(t)
	db, err := duck.Open(ctx, duck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cols := []string{"n", "nl", "lo", "hi", "t0", "t1", "llo", "lhi", "ls", "round(la, 6)", "bs"}
	for i, last := range []int{3, 10, 11, 11, 40, 77} {
		land(last)
		once(t, r, "bronze_orders")
		for _, task := range []string{"nk_inc", "nk_full", "nk2_inc", "nk2_full"} {
			if rep := once(t, r, task); rep.Error != "" {
				t.Fatalf("batch %d: %s: %+v", i, task, rep)
			}
		}
		for _, m := range []struct {
			name string
			keys []string
		}{{"nk", []string{"g"}}, {"nk2", []string{"g", "k"}}} {
			loadTable(t, r, db, conn, prefix+m.name+"_inc", "got_inc")
			loadTable(t, r, db, conn, prefix+m.name+"_full", "got_full")
			c := append(append([]string(nil), m.keys...), cols...)
			got, want := textRows(t, db, "SELECT * FROM got_inc", c), textRows(t, db, "SELECT * FROM got_full", c)
			if got != want || !strings.Contains(want, "-1|") {
				t.Fatalf("batch %d (orders 1..%d): %s incremental:\n%s\nrecomputed:\n%s", i, last, m.name, got, want)
			}
			_ = db.Exec(ctx, "DROP TABLE IF EXISTS got_inc")
			_ = db.Exec(ctx, "DROP TABLE IF EXISTS got_full")
		}
	}
}

// TestAggregate_NullKeyRefused: a group_by column NULL in a row (the only
// key column, or one of two) cannot be stored — the group is the sink's
// key, a PostgreSQL primary key or an Iceberg identifier field — so the run
// fails as bad input naming the column and how to name the NULL group,
// before the sink is written, on an Iceberg and a PostgreSQL sink.
func TestAggregate_NullKeyRefused(t *testing.T) {
	const rows = "SELECT CASE WHEN customer_id = 3 THEN NULL ELSE customer_id END AS g, CASE WHEN id % 4 = 0 THEN NULL ELSE status END AS k, amount FROM input"
	// (with two key columns NULL in different rows, either may be named)
	for _, c := range []struct{ by, col string }{{"[g]", "g"}, {"[k]", "k"}, {"[g, k]", "[gk]"}, {"[k, g]", "[gk]"}} {
		model := func(prefix string) string {
			return "  nk:\n    model:\n      source: " + prefix + "bronze.orders\n      sink: " + prefix + "gold.nk\n      sql: \"" + rows + "\"\n      aggregate: {group_by: " + c.by + ", measures: {n: count(*), s: sum(amount)}}\n"
		}
		check := func(t *testing.T, r *Runner, exists func() bool) {
			once(t, r, "bronze_orders")
			_, err := r.Once(testContext(t), "nk")
			want := "group_by column " + c.col + " is NULL"
			if !errors.Is(err, routes.ErrBadInput) || !regexp.MustCompile(want).MatchString(err.Error()) || !strings.Contains(err.Error(), "coalesce(") {
				t.Errorf("group_by %s: %v, want bad input saying %q", c.by, err, want)
			}
			if exists() {
				t.Errorf("group_by %s: the sink was written", c.by)
			}
		}
		t.Run("iceberg "+c.by, func(t *testing.T) {
			d := newLakeDAG(t, "warn")
			body, _ := readFile(d.path)
			writeFile(t, d.path, body+model("lake:"))
			r := d.runner(t)
			d.orders(t, 1, 20)
			check(t, r, func() bool { return lakeTableExists(t, r, "gold.nk") })
		})
		t.Run("postgres "+c.by, func(t *testing.T) {
			d := newPGDAG(t, medallionYAML+strings.NewReplacer("pg:bronze.", "pg:S.bronze_", "pg:gold.", "pg:S.gold_").Replace(model("pg:")))
			r := d.runner(t)
			d.insertOrders(t, 1, 20)
			check(t, r, func() bool {
				var ok bool
				if err := d.fx.Pool.QueryRow(testContext(t), "SELECT to_regclass($1) IS NOT NULL", d.s+".gold_nk").Scan(&ok); err != nil {
					t.Fatal(err)
				}
				return ok
			})
		})
	}
}

// TestAggregate_DecimalOverflowFails: a sum of DECIMAL(38,2) that passes
// 38 digits when a batch merges with the stored sum fails the run, and the
// stored sum stays as it was (never wrapped or rounded).
func TestAggregate_DecimalOverflowFails(t *testing.T) {
	d := newLakeDAG(t, "warn")
	body, _ := readFile(d.path)
	writeFile(t, d.path, body+"  big:\n    model:\n      source: lake:bronze.orders\n      sink: lake:gold.big\n      sql: SELECT CAST('600000000000000000000000000000000000.01' AS DECIMAL(38,2)) AS v FROM input\n      aggregate: {group_by: [], measures: {s: sum(v)}}\n")
	r := d.runner(t)
	ctx := testContext(t)
	db, err := duck.Open(ctx, duck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d.orders(t, 1, 1)
	once(t, r, "bronze_orders")
	once(t, r, "big")
	d.orders(t, 1, 2)
	once(t, r, "bronze_orders")
	if rep, err := r.Once(ctx, "big"); err == nil {
		t.Fatalf("a sum past DECIMAL(38,2) committed: %+v", rep)
	}
	loadTable(t, r, db, "lake", "gold.big", "got")
	if got := textRows(t, db, "SELECT * FROM got", []string{"s"}); got != "600000000000000000000000000000000000.01" {
		t.Fatalf("stored sum %q after the failed run", got)
	}
}
