package runner

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirhq/weir/dagfile"
)

// TestLintModels: every model's SQL is parsed, and bound where its inputs'
// schemas are knowable offline — a table of the local Iceberg lake (read
// from its SQLite catalog) or an upstream model's bound output — so a
// typo, an unknown column or a syntax error is MODEL-002 at the SQL's
// line; an input lint cannot know is MODEL-004 (info), naming it.
func TestLintModels(t *testing.T) {
	d := newLakeDAG(t, "warn")
	r := d.runner(t)
	d.orders(t, 1, 10)
	once(t, r, "bronze_orders") // bronze.orders now exists in the lake
	path := filepath.Join(d.dir, "lint.yaml")
	writeFile(t, path, `version: 1
connections:
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  silver:
    model: {source: lake:bronze.orders, sink: lake:silver.x, sql: "SELECT id, customer_id, amount * 2 AS amount2 FROM input"}
  typo:
    model: {source: lake:bronze.orders, sink: lake:silver.typo, sql: "SELECT id, amout FROM input"}
  gold:
    model: {source: lake:silver.x, sink: lake:gold.x, sql: "SELECT customer_id, sum(amount2) AS total FROM input GROUP BY 1"}
  gold_typo:
    model: {source: lake:silver.x, sink: lake:gold.typo, sql: "SELECT customer_id, sum(amount) AS total FROM input GROUP BY 1"}
  syntax:
    model: {source: lake:bronze.orders, sink: lake:silver.syntax, sql: "SELEC id FROM input"}
  unknown:
    model: {source: lake:s.nosuch, sink: lake:silver.unknown, sql: "SELECT id FROM input"}
  constant:
    model: {source: lake:s.nosuch, sink: lake:silver.constant, sql: "SELECT 1 AS one"}
  this_typo:
    model: {source: lake:s.nosuch, sink: lake:bronze.orders, sql: "SELECT t.id FROM this t WHERE t.amout > 0"}
  this_new:
    model: {source: lake:s.nosuch, sink: lake:gold.new, sql: "SELECT id FROM this"}
`)
	f, err := dagfile.LoadStatic(path)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := LintModels(testContext(t), f, f.Tasks)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range fs {
		got = append(got, strings.TrimPrefix(x.String(), path))
	}
	want := []string{
		`:8:70: error MODEL-002: task typo: SQL: Binder Error: Referenced column "amout" not found in FROM clause!`,
		`:10:60: info MODEL-006: task gold: SQL: runs whole: its plan has HASH_GROUP_BY over its input`,
		`:12:63: error MODEL-002: task gold_typo: SQL: Binder Error: Referenced column "amount" not found in FROM clause!`,
		`:14:72: error MODEL-002: task syntax: SQL: does not parse: syntax error at or near "SELEC"`,
		`:16:68: info MODEL-004: task unknown: SQL: not bound: the schema of input (lake:s.nosuch) is not knowable offline: the table does not exist yet in`,
		`:20:67: error MODEL-002: task this_typo: SQL: Binder Error: Table "t" does not have a column named "amout"`,
		`:22:62: info MODEL-004: task this_new: SQL: not bound: it reads this (the sink's rows), whose schema is not knowable offline: the table does not exist yet`,
	}
	if len(got) != len(want) {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("finding %d:\n%s\nwant it to start with\n%s", i, got[i], want[i])
		}
	}
}

// TestLintModels_Aggregate: a declared aggregate is checked against its
// SQL's bound output (MODEL-005 at the place in the dagfile): a group_by
// or measure column the SQL does not output, sum or avg over text, a
// declared type DuckDB refuses; an unknown measure function is MODEL-005
// when the dagfile is parsed. A good aggregate's output (its measures and
// hidden avg columns, typed as bound) is what a downstream model binds to.
func TestLintModels_Aggregate(t *testing.T) {
	d := newLakeDAG(t, "warn")
	r := d.runner(t)
	d.orders(t, 1, 10)
	once(t, r, "bronze_orders")
	path := filepath.Join(d.dir, "lint.yaml")
	writeFile(t, path, `version: 1
connections:
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  no_group:
    model:
      source: lake:bronze.orders
      sink: lake:gold.a
      sql: SELECT customer_id, amount FROM input
      aggregate: {group_by: [customer], measures: {total: sum(amount)}}
  text_sum:
    model:
      source: lake:bronze.orders
      sink: lake:gold.b
      sql: SELECT customer_id, status FROM input
      aggregate: {group_by: [customer_id], measures: {n: count(*), total: sum(status)}}
  text_avg:
    model:
      source: lake:bronze.orders
      sink: lake:gold.c
      sql: SELECT customer_id, status FROM input
      aggregate: {group_by: [customer_id], measures: {mean: avg(status)}}
  no_arg:
    model:
      source: lake:bronze.orders
      sink: lake:gold.d
      sql: SELECT customer_id FROM input
      aggregate: {group_by: [customer_id], measures: {top: max(amount)}}
  bad_type:
    model:
      source: lake:bronze.orders
      sink: lake:gold.e
      sql: SELECT customer_id, amount FROM input
      aggregate: {group_by: [customer_id], measures: {mean: {agg: avg(amount), type: "DECIMAL(99,2)"}}}
  unknown_fn:
    model:
      source: lake:bronze.orders
      sink: lake:gold.f
      sql: SELECT customer_id, amount FROM input
      aggregate: {group_by: [customer_id], measures: {p: median(amount)}}
  good:
    model:
      source: lake:bronze.orders
      sink: lake:gold.g
      sql: SELECT customer_id, amount FROM input
      aggregate: {group_by: [customer_id], measures: {total: sum(amount), n: count(*), mean: avg(amount)}}
  downstream:
    model: {source: lake:gold.g, sink: lake:gold.h, mode: replace, sql: "SELECT customer_id, total, n, mean, _weir_sum_mean, _weir_count_mean, nope FROM input"}
`)
	checked, err := dagfile.CheckFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := dagfile.LoadStatic(path)
	if err == nil {
		t.Fatal("the dagfile with median() loaded")
	}
	// Bind the rest without the task that does not parse.
	body, _ := readFile(path)
	writeFile(t, path, strings.Replace(body, "median(amount)", "min(amount)", 1))
	if f, err = dagfile.LoadStatic(path); err != nil {
		t.Fatal(err)
	}
	fs, err := LintModels(testContext(t), f, f.Tasks)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range append(checked, fs...) {
		if x.Rule == dagfile.RuleModelAggregate || x.Rule == dagfile.RuleModelSQL {
			got = append(got, strings.TrimPrefix(x.String(), path))
		}
	}
	want := []string{
		`:40:58: error MODEL-005: tasks.unknown_fn.model.aggregate.measures.p: measure p: unknown function "median"`,
		`:10:30: error MODEL-005: task no_group: aggregate: group_by column "customer" is not a column of the SQL's output (customer_id, amount)`,
		`:16:75: error MODEL-005: task text_sum: aggregate: measure total: sum(status) needs a number, and status is VARCHAR; cast it in the SQL`,
		`:22:61: error MODEL-005: task text_avg: aggregate: measure mean: avg(status) needs a number, and status is VARCHAR`,
		`:28:60: error MODEL-005: task no_arg: aggregate: measure top: column "amount" is not a column of the SQL's output (customer_id)`,
		`:34:7: error MODEL-005: task bad_type: aggregate: measure mean: type "DECIMAL(99,2)"`,
		`:48:73: error MODEL-002: task downstream: SQL: Binder Error: Referenced column "nope" not found in FROM clause!`,
	}
	if len(got) != len(want) {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("finding %d:\n%s\nwant it to start with\n%s", i, got[i], want[i])
		}
	}
}
