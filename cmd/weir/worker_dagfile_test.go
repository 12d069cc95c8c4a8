package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestWorker_FromDagfile: without --claims and --shards, weir backfill and
// weir worker take them from the task's backfill: — the claim store's URL
// from the connection it names, expanded from the environment, as the
// generated fan-out runs them; a variable left unset is bad input naming it.
func TestWorker_FromDagfile(t *testing.T) {
	pg := postgrestest.New(t)
	ctx := routestest.Context(t, time.Minute)
	pg.Exec(t, ctx, "CREATE TABLE "+pg.Ref("ev")+" (id bigint PRIMARY KEY, v text)",
		"INSERT INTO "+pg.Ref("ev")+" SELECT g, 'row ' || g FROM generate_series(1, 3000) g")
	dir := t.TempDir()
	dagf := filepath.Join(dir, "weir.yaml")
	yaml := fmt.Sprintf(`version: 1
connections:
  pg: {url: %q}
  claims: ${WEIR_TEST_CLAIMS_URL}
tasks:
  ev:
    transfer: {from: pg, table: %s, to: pg, dest_table: %s, mode: append}
    backfill: {shards: 3, workers: 2, claims: claims}
`, pg.URL(), pg.Ref("ev"), pg.Ref("out"))
	if err := os.WriteFile(dagf, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, msg := runCmdMsg(t, "backfill", "--task", "ev", "-f", dagf); code != ExitBadInput || !strings.Contains(msg, "WEIR_TEST_CLAIMS_URL") {
		t.Errorf("backfill with the claims variable unset: exit %d: %s; want 2 naming WEIR_TEST_CLAIMS_URL", code, msg)
	}
	store := "sqlite://" + filepath.Join(dir, "claims.db")
	t.Setenv("WEIR_TEST_CLAIMS_URL", store)
	if code, out := runCmd(t, "backfill", "--task", "ev", "-f", dagf); code != ExitOK {
		t.Fatalf("backfill: exit %d: %s", code, out)
	}
	if bs := backfillStatus(t, dagf, store); bs == nil || len(bs.Buckets) != 3 {
		t.Fatalf("weir status --claims after the plan: %+v, want the dagfile's 3 buckets", bs)
	}
	if code, out := runCmd(t, "worker", "--task", "ev", "-f", dagf); code != ExitOK || !strings.Contains(out, `"caught_up":true`) {
		t.Fatalf("worker: exit %d: %s; want 0, caught up", code, out)
	}
	var n int64
	if err := pg.Pool.QueryRow(ctx, "SELECT count(DISTINCT id) FROM "+pg.Ref("out")).Scan(&n); err != nil || n != 3000 {
		t.Errorf("sink: %d distinct rows (%v), want 3000", n, err)
	}
}
