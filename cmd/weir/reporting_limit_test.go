package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"net/http/httptest"

	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestOnceOpenLineage_QuarantineAtTheLimit: the COMPLETE event names a
// model's quarantine table as weir named it (runner.QuarantineTable). For
// a PostgreSQL sink at the 63-byte limit that name is shortened to fit;
// the event used to name <sink>__quarantine by itself, a table that does
// not exist (the server would cut it back onto the sink's own name).
func TestOnceOpenLineage_QuarantineAtTheLimit(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	fx := postgrestest.New(t)
	fx.Exec(t, ctx, "CREATE TABLE "+fx.Schema+".src (id text, a text)", "INSERT INTO "+fx.Schema+".src VALUES ('1', '5'), ('2', 'x')")
	sink := strings.Repeat("q", 63)
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	t.Setenv("OPENLINEAGE_URL", srv.URL)
	path := filepath.Join(t.TempDir(), "weir.yaml")
	dag := strings.ReplaceAll("version: 1\nconnections:\n  pg: ${WEIR_TEST_PG}\ntasks:\n  m:\n    model: {source: pg:S.src, sink: pg:S."+sink+", mode: replace, sql: SELECT * FROM input}\n    contract: {columns: [{name: id, type: int}, {name: a, type: int}]}\n", "S.", fx.Schema+".")
	if err := os.WriteFile(path, []byte(dag), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _ := runCmd(t, "once", "--task", "m", "-f", path); code != ExitOK {
		t.Fatalf("once exited %d", code)
	}
	var q string
	if err := fx.Pool.QueryRow(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name <> 'src' AND table_name <> $2 AND table_name NOT LIKE '\_weir%'`, fx.Schema, sink).Scan(&q); err != nil {
		t.Fatalf("the quarantine table: %v", err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var names []string
	for _, b := range rc.events {
		var e olEvent
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		if e.EventType != "COMPLETE" {
			continue
		}
		for _, d := range e.Outputs {
			names = append(names, d.Name)
		}
	}
	want := fx.Schema + "." + q
	found := false
	for _, n := range names {
		found = found || strings.HasSuffix(n, want)
		if strings.HasSuffix(n, sink+"__quarantine") {
			t.Errorf("COMPLETE names %s, a table that does not exist", n)
		}
	}
	if !found {
		t.Errorf("COMPLETE outputs %v: none is the quarantine table %s", names, want)
	}
}
