package main

import (
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestTransferCmd_LogBasedClickHouse: `weir transfer … clickhouse://…
// --mode log_based` bootstraps a replica from MySQL, applies the changes
// since on the next run, does nothing on an idle one; with --changelog
// it keeps a log and its __current view.
func TestTransferCmd_LogBasedClickHouse(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst, logs := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, "clickhouse"), cdctest.Open(t, ctx, "clickhouse")
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" (id INT PRIMARY KEY, v VARCHAR(20), amount DECIMAL(10,2))")
	src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" VALUES (1, 'a', 1.5), (2, 'b', NULL), (3, 'c', 3)")
	transfer := func(dest *cdctest.DB, extra ...string) {
		t.Helper()
		args := append([]string{"transfer", src.URL, dest.URL, "--mode", "log_based", "--tables", src.Schema + ".t",
			"--dest-schema", dest.Schema}, extra...)
		if code, out := runCmd(t, args...); code != ExitOK {
			t.Fatalf("transfer exited %d: %s", code, out)
		}
	}
	cols := []string{"id", "v", "amount"}
	equal := func(step string) {
		t.Helper()
		want := src.Hash(t, ctx, "t", cols, "id")
		if d := dst.Hash(t, ctx, "t", cols, "id"); d != want {
			t.Fatalf("%s: replica %s != source %s", step, d, want)
		}
		if d := logs.Hash(t, ctx, "t__current", cols, "id"); d != want {
			t.Fatalf("%s: t__current %s != source %s", step, d, want)
		}
	}
	transfer(dst)
	transfer(logs, "--changelog")
	equal("bootstrap")
	if got := strings.Join(logs.LogOps(t, ctx, "t", "id", true), ","); got != "B 1,B 2,B 3" {
		t.Fatalf("log after the bootstrap = %s, want 3 baseline rows", got)
	}
	src.Exec(t, ctx, "UPDATE "+src.Table("t")+" SET v = 'B', amount = 2.25 WHERE id = 2")
	src.Exec(t, ctx, "DELETE FROM "+src.Table("t")+" WHERE id = 3")
	src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" VALUES (4, 'd', NULL)")
	transfer(dst)
	transfer(logs, "--changelog")
	equal("second run")
	// Idle runs write nothing: no new versions, no ops.
	versions := dst.Query(t, ctx, "SELECT toString(count()) FROM "+dst.Table("t"))
	transfer(dst)
	transfer(logs, "--changelog")
	if got := dst.Query(t, ctx, "SELECT toString(count()) FROM "+dst.Table("t")); got != versions {
		t.Fatalf("idle run wrote versions: %s rows, was %s", got, versions)
	}
	equal("idle run")
	if got := strings.Join(logs.LogOps(t, ctx, "t", "id", false), ","); got != "U 2,D 3,I 4" {
		t.Fatalf("log ops = %s, want U 2,D 3,I 4", got)
	}
}
