package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/routes/routestest"
)

// TestTransferCmd_LogBasedIceberg: `weir transfer mysql://… iceberg://…
// --mode log_based` end to end, as a replica and with --changelog: a
// bootstrap, then the drained window, each reported in the JSON, the
// table (or the log's current state) equal to the source.
func TestTransferCmd_LogBasedIceberg(t *testing.T) {
	for _, changelog := range []bool{false, true} {
		name := "replica"
		if changelog {
			name = "changelog"
		}
		t.Run(name, func(t *testing.T) { logBasedIceberg(t, changelog) })
	}
}

func logBasedIceberg(t *testing.T, changelog bool) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, "iceberg")
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" (id INT PRIMARY KEY, v VARCHAR(20), amount DECIMAL(10,2))")
	src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" VALUES (1, 'a', 1.50), (2, 'b', NULL), (3, 'c', 3.25)")
	args := []string{"transfer", src.URL, dst.URL, "--mode", "log_based", "--tables", src.Schema + ".t",
		"--dest-schema", dst.Schema, "--json"}
	if changelog {
		args = append(args, "--changelog")
	}
	first := transferCDC(t, args)
	if first["bootstrap"] != true || first["rows"] != 3.0 {
		t.Fatalf("first run cdc = %v, want a bootstrap of 3 rows", first)
	}
	src.Exec(t, ctx, "UPDATE "+src.Table("t")+" SET v = 'B', amount = 9.99 WHERE id = 2")
	src.Exec(t, ctx, "DELETE FROM "+src.Table("t")+" WHERE id = 3")
	src.Exec(t, ctx, "UPDATE "+src.Table("t")+" SET id = 10 WHERE id = 1")
	second := transferCDC(t, args)
	if second["bootstrap"] != false || second["from"] != first["to"] {
		t.Fatalf("second run cdc = %v, want the window from %v", second, first["to"])
	}
	cols := []string{"id", "v", "amount"}
	want := src.RowsHash(t, ctx, "t", cols)
	if !changelog {
		if second["upserts"] != 2.0 || second["deletes"] != 2.0 {
			t.Errorf("second run cdc = %v, want 2 upserts and 2 deletes", second)
		}
		if got := dst.RowsHash(t, ctx, "t", cols); got != want {
			t.Fatalf("destination %s != source %s", got, want)
		}
		return
	}
	if second["appended"] != 4.0 {
		t.Errorf("second run cdc = %v, want 4 ops appended", second)
	}
	if got := strings.Join(dst.LogOps(t, ctx, "t", "id", false), ","); got != "U 2,D 3,D 1,U 10" {
		t.Fatalf("log ops = %s, want U 2,D 3,D 1,U 10", got)
	}
	if got := dst.CurrentHash(t, ctx, "t", cols, []string{"id"}); got != want {
		t.Fatalf("current state %s != source %s", got, want)
	}
}

// transferCDC runs weir transfer --json and returns its report's cdc
// object.
func transferCDC(t *testing.T, args []string) map[string]any {
	t.Helper()
	code, out := runCmd(t, args...)
	if code != ExitOK {
		t.Fatalf("transfer exited %d: %s", code, out)
	}
	return cdcReport(t, out)
}

// TestOnceCmd_IcebergChangelogModel: the medallion pattern of docs/cdc.md
// — a log_based changelog into an Iceberg lake, and a replace model that
// derives the current rows from it with cdc.CurrentSQL (there is no
// __current view in Iceberg) — run with weir once; the model's sink
// equals the source after a bootstrap and after a window with an update,
// a key change, a delete and a TRUNCATE.
func TestOnceCmd_IcebergChangelogModel(t *testing.T) {
	ctx := routestest.Context(t, 3*time.Minute)
	src, lake := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, "iceberg")
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("customers")+" (customer_id BIGINT PRIMARY KEY, email VARCHAR(50), country CHAR(2))")
	src.Exec(t, ctx, "INSERT INTO "+src.Table("customers")+" VALUES (1, 'a@x', 'DE'), (2, 'b@x', 'FR'), (3, 'c@x', NULL)")
	cols := []string{"customer_id", "email", "country"}
	sql := cdc.CurrentSQL(&cdc.Table{Columns: cols, Key: []int{0}}, duck.Ident, "input")
	path := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf(`version: 1
connections:
  app: %s
  lake: %s
tasks:
  bronze_customers:
    transfer: {from: app, table: %s.customers, to: lake, dest_table: %s.customers, mode: log_based, changelog: true}
  silver_customers_current:
    model:
      source: lake:%[4]s.customers
      sink: lake:%[4]s.customers_current
      mode: replace
      sql: |
        %s
`, src.URL, lake.URL, src.Schema, lake.Schema, strings.ReplaceAll(sql, "\n", "\n        "))), 0o644)
	pass := func(step string) {
		t.Helper()
		for _, task := range []string{"bronze_customers", "silver_customers_current"} {
			if code, out := runCmd(t, "once", "--task", task, "-f", path, "--json"); code != ExitOK {
				t.Fatalf("%s: once --task %s exited %d: %s", step, task, code, out)
			}
		}
		if s, d := src.RowsHash(t, ctx, "customers", cols), lake.RowsHash(t, ctx, "customers_current", cols); s != d {
			t.Fatalf("%s: silver %s != source %s", step, d, s)
		}
	}
	pass("bootstrap")
	src.Exec(t, ctx, "UPDATE "+src.Table("customers")+" SET email = 'b2@x' WHERE customer_id = 2")
	src.Exec(t, ctx, "UPDATE "+src.Table("customers")+" SET customer_id = 30 WHERE customer_id = 3")
	src.Exec(t, ctx, "DELETE FROM "+src.Table("customers")+" WHERE customer_id = 1")
	pass("after a window")
	src.Exec(t, ctx, "TRUNCATE TABLE "+src.Table("customers"))
	src.Exec(t, ctx, "INSERT INTO "+src.Table("customers")+" VALUES (7, 'g@x', 'IT')")
	pass("after a truncate")
	// weir status reads the position from the Iceberg table's state.
	if code, out := runCmd(t, "status", "-f", path, "--task", "bronze_customers", "--json"); code != ExitOK || !strings.Contains(out, `"log": "binlog"`) && !strings.Contains(out, `"log":"binlog"`) {
		t.Errorf("status exited %d, want the binlog position:\n%s", code, out)
	}
}
