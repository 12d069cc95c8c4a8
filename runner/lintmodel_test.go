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
