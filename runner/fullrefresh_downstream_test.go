package runner

import (
	"io"
	"strings"
	"testing"

	"github.com/weirhq/weir/duck"
)

// TestFullRefresh_WarnsDownstream: a full refresh of a model whose sink an
// incremental aggregate reads warns that the rebuilt rows reach the
// aggregate again (it keeps its offsets), naming the command that resets it
// too (a replace model downstream is not named); doing so, the aggregate
// equals its value before the rebuild, not twice it.
func TestFullRefresh_WarnsDownstream(t *testing.T) {
	d := newLakeDAG(t, "warn")
	body, _ := readFile(d.path)
	writeFile(t, d.path, body+"  silver_count:\n    model:\n      source: lake:silver.orders\n      sink: lake:gold.silver_count\n      sql: SELECT amount FROM input\n      aggregate: {group_by: [], measures: {n: count(*), s: sum(amount)}}\n")
	log := &syncBuf{}
	r, err := Load(d.path, Options{Log: io.MultiWriter(testLog{t}, log)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	ctx := testContext(t)
	db, err := duck.Open(ctx, duck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(name string) string {
		loadTable(t, r, db, "lake", "gold.silver_count", name)
		return textRows(t, db, "SELECT * FROM "+name, []string{"n", "s"})
	}
	d.orders(t, 1, 30)
	for _, task := range []string{"bronze_orders", "silver_orders", "silver_count"} {
		once(t, r, task)
	}
	before := count("before")
	if _, err := r.ResetWith(ctx, "silver_orders", "earliest", ResetOptions{FullRefresh: true}); err != nil {
		t.Fatal(err)
	}
	if w := log.String(); !strings.Contains(w, "model silver_count reads lake:silver.orders") || !strings.Contains(w, "weir reset --task silver_count --to earliest --full-refresh") || strings.Contains(w, "model gold_country reads") {
		t.Fatalf("no warning naming silver_count (and only it):\n%s", w)
	}
	if _, err := r.ResetWith(ctx, "silver_count", "earliest", ResetOptions{FullRefresh: true}); err != nil {
		t.Fatal(err)
	}
	for _, task := range []string{"silver_orders", "silver_count"} {
		once(t, r, task)
	}
	if after := count("after"); after != before || before == "" {
		t.Fatalf("after both rebuilds: %q, want %q", after, before)
	}
}
