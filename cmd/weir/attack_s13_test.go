package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/postgres/postgrestest"
)

// Attack tests of session 13, by an outside tester: a model's contract.

// attackS13Contract loads csv into an embedded lake, runs a replace model
// over it under contract, and returns the report's rows and quarantined.
func attackS13Contract(t *testing.T, csv, contract string) (rows, quarantined int64) {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	os.WriteFile(filepath.Join(dir, "data", "t.csv"), []byte(csv), 0o644)
	path := filepath.Join(dir, "weir.yaml")
	os.WriteFile(path, []byte(`version: 1
connections:
  files: file://./data
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  bronze:
    transfer: {from: files, table: t.csv, to: lake, dest_table: bronze.t}
  silver:
    model: {source: lake:bronze.t, sink: lake:silver.t, mode: replace, sql: "SELECT * FROM input"}
    contract: `+contract+`
`), 0o644)
	if code, out := runCmd(t, "once", "--task", "bronze", "-f", path); code != ExitOK {
		t.Fatalf("once bronze: exit %d: %s", code, out)
	}
	code, out := runCmd(t, "once", "--task", "silver", "-f", path, "--json")
	if code != ExitOK {
		t.Fatalf("once silver: exit %d: %s", code, out)
	}
	var rep struct {
		Rows        int64 `json:"rows"`
		Quarantined int64 `json:"quarantined"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	t.Log(out)
	return rep.Rows, rep.Quarantined
}

// TestAttackS13_ContractIntegerFraction: docs/contracts.md promises that a
// number with a fraction does not cast into an integer type. The check went
// through DOUBLE, which has no fraction digits left at 12345678901234567.5:
// DuckDB rounded it to 12345678901234568, the row passed the contract and
// landed, exit 0. Both rows must be quarantined (type(x)).
func TestAttackS13_ContractIntegerFraction(t *testing.T) {
	rows, q := attackS13Contract(t, "id,x\n1,7.5\n2,12345678901234567.5\n3,42\n", "{columns: [{name: x, type: BIGINT}]}")
	if rows != 1 || q != 2 {
		t.Fatalf("%d rows landed and %d were quarantined, want 1 and 2 (7.5 and 12345678901234567.5 are not BIGINTs)", rows, q)
	}
}

// TestAttackS13_ContractDateDropsTime: a contract's DATE column took
// 2024-01-01 10:30:00 as 2024-01-01 (DuckDB drops the time of day), exit 0
// — the lossy kind of cast docs/contracts.md says does not cast.
func TestAttackS13_ContractDateDropsTime(t *testing.T) {
	rows, q := attackS13Contract(t, "id,d\n1,2024-01-01 10:30:00\n2,2024-01-02\n", "{columns: [{name: d, type: date}]}")
	if rows != 1 || q != 1 {
		t.Fatalf("%d rows landed and %d were quarantined, want 1 and 1 (10:30 is not a date)", rows, q)
	}
}

// TestAttackS13_ModelColumnsDifferInCase: PostgreSQL holds columns "V" and
// "v" apart; DuckDB's identifiers are case-insensitive, so the model's
// input had "V" and "v_1", and SELECT id, "v" read "V": the sink got the
// other column's values, exit 0. Want bad input (exit 2) naming both
// columns, before anything is written.
func TestAttackS13_ModelColumnsDifferInCase(t *testing.T) {
	fx := postgrestest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fx.Exec(t, ctx, "CREATE TABLE "+fx.Schema+`.src (id bigint PRIMARY KEY, "V" text, "v" text)`, "INSERT INTO "+fx.Schema+".src VALUES (1, 'upper', 'lower')")
	path := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(path, []byte(strings.ReplaceAll(`version: 1
connections:
  pg: ${WEIR_TEST_PG}
tasks:
  m:
    model: {source: pg:S.src, sink: pg:S.dst, mode: replace, sql: 'SELECT id, "v" FROM input'}
`, "S.", fx.Schema+".")), 0o644)
	code, _ := runCmd(t, "once", "--task", "m", "-f", path)
	var got string
	if err := fx.Pool.QueryRow(ctx, "SELECT COALESCE(to_regclass($1)::text, '')", fx.Schema+".dst").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "" {
		fx.Pool.QueryRow(ctx, "SELECT string_agg(t::text, ' ') FROM "+fx.Schema+".dst t").Scan(&got)
	}
	if code != ExitBadInput || got != "" {
		t.Fatalf("exit %d, sink %q; want exit 2 and no sink (the source's v is 'lower')", code, got)
	}
}
