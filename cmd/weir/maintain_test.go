package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
)

// TestMaintain_CLI: weir maintain on the quickstart lake after three
// batches of orders. A missing or doubled target and a task without an
// Iceberg table exit 2; --dry-run --json reports the compaction and
// changes nothing (a second dry run plans the same); the run compacts
// bronze.orders (every reader has read it) and a dry run after it finds
// nothing left to do; the connection form (SRC --table) does the same, and
// the pipeline reads on afterwards with the same totals as a pipeline that
// was never maintained.
func TestMaintain_CLI(t *testing.T) {
	path := quickstart(t)
	orders := filepath.Join(filepath.Dir(path), "data", "orders.csv")
	all, err := os.ReadFile(orders)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(all), "\n"), "\n")
	land := func(n int) {
		if err := os.WriteFile(orders, []byte(strings.Join(lines[:n+1], "")), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := runCmdErr(t, "run", "--once", "-f", path); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, stderr)
		}
	}
	for _, n := range []int{100, 200, 300} {
		land(n)
	}
	for _, bad := range [][]string{
		{"maintain", "-f", path},
		{"maintain", "lake", "--task", "bronze_orders", "--table", "bronze.orders", "-f", path},
		{"maintain", "lake", "-f", path},
		{"maintain", "--task", "bronze_orders", "--skip", "vacuum", "-f", path},
		{"maintain", "--task", "nope", "-f", path},
		{"maintain", "files", "--table", "orders.csv", "-f", path},
	} {
		if code, _, _ := runCmdErr(t, bad...); code != ExitBadInput {
			t.Errorf("weir %s: exit %d, want %d", strings.Join(bad, " "), code, ExitBadInput)
		}
	}
	report := func(args ...string) routes.MaintainReport {
		t.Helper()
		code, stdout, stderr := runCmdErr(t, append([]string{"maintain", "--json", "-f", path}, args...)...)
		var rep routes.MaintainReport
		if code != 0 || json.Unmarshal([]byte(stdout), &rep) != nil {
			t.Fatalf("maintain %v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		return rep
	}
	dry := report("--task", "bronze_orders", "--dry-run")
	if !dry.DryRun || dry.Compact.Rewritten != 3 || dry.Compact.DataFilesBefore != 3 {
		t.Fatalf("dry run: %+v", dry)
	}
	if again := report("--task", "bronze_orders", "--dry-run"); fmt.Sprint(again.Compact) != fmt.Sprint(dry.Compact) || fmt.Sprint(again.Expire) != fmt.Sprint(dry.Expire) {
		t.Fatalf("the dry run changed something: %+v, then %+v", dry, again)
	}
	done := report("--task", "bronze_orders")
	if done.Compact.Rewritten != 3 || done.Compact.DataFilesAfter != 1 || done.Snapshot == nil {
		t.Fatalf("maintain: %+v", done)
	}
	if after := report("lake", "--table", "bronze.orders", "--dry-run"); after.Compact.Rewritten != 0 || len(after.Orphans.Files) != 0 {
		t.Fatalf("dry run after maintain: %+v", after)
	}
	land(400)
	if code, stdout, _ := runCmdErr(t, "maintain", "--task", "silver_orders", "-f", path); code != 0 || !strings.Contains(stdout, "silver.orders: compact") {
		t.Fatalf("maintain silver_orders: exit %d, %q", code, stdout)
	}
	// The same batches into a lake never maintained: the same gold.
	gold := func(dagfile string) string {
		t.Helper()
		out := filepath.Join(t.TempDir(), "gold.csv")
		if code, _, stderr := runCmdErr(t, "read", "lake", "--table", "gold.revenue_by_country", "--to", out, "-f", dagfile); code != 0 {
			t.Fatalf("read gold: exit %d\n%s", code, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		rows := strings.Split(strings.TrimSpace(string(data)), "\n")
		slices.Sort(rows)
		return strings.Join(rows, "\n")
	}
	maintained := gold(path)
	path, orders = quickstart(t), ""
	orders = filepath.Join(filepath.Dir(path), "data", "orders.csv")
	for _, n := range []int{100, 200, 300, 400} {
		land(n)
	}
	if plain := gold(path); plain != maintained || !strings.Contains(plain, ",") {
		t.Fatalf("gold after maintain:\n%s\nwithout:\n%s", maintained, plain)
	}
}

// TestMaintain_CLIRefusesSilentFallbacks: flags that used to be ignored or
// fall back to a default without a word (--table with --task, negative
// counts, sizes and ages) and a table that does not exist are exit 2.
func TestMaintain_CLIRefusesSilentFallbacks(t *testing.T) {
	path := quickstart(t)
	if code, _, stderr := runCmdErr(t, "run", "--once", "--task", "bronze_orders", "-f", path); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	for _, bad := range [][]string{
		{"--task", "silver_orders", "--table", "bronze.orders"},
		{"--task", "bronze_orders", "--retain-last", "-1"},
		{"--task", "bronze_orders", "--retain-last", "0"},
		{"--task", "bronze_orders", "--min-input-files", "-1"},
		{"--task", "bronze_orders", "--target-file-size", "-5"},
		{"--task", "bronze_orders", "--target-file-size", "0"},
		{"--task", "bronze_orders", "--orphan-age", "-1s"},
		{"--task", "bronze_orders", "--keep-from", "-3"},
		{"lake", "--table", "bronze.nosuch"},
		{"lake", "--table", "nosuch.orders"},
	} {
		args := append([]string{"maintain", "--dry-run", "-f", path}, bad...)
		if code, _, stderr := runCmdErr(t, args...); code != ExitBadInput {
			t.Errorf("weir %s: exit %d, want %d\n%s", strings.Join(bad, " "), code, ExitBadInput, stderr)
		}
	}
	if code, _, stderr := runCmdErr(t, "maintain", "--dry-run", "--task", "bronze_orders", "--orphan-age", "0s", "--keep-from", "0", "-f", path); code != 0 {
		t.Errorf("the limits themselves: exit %d\n%s", code, stderr)
	}
}
