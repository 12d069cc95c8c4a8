package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// streamDagfile writes a one-task stream dagfile (task t, source src)
// into an embedded lake.
func streamDagfile(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "weir.yaml")
	body := `version: 1
connections:
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  t:
    stream: {source: "` + src + `", sink: lake:raw.t, batch_interval: 300ms, reconnect_attempts: 1}
    contract:
      columns: [{name: id, type: BIGINT, required: true}]
`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStream_CLI: on the command line, a stream source that is down
// exits 1 (the generated code retries it), status prints a stream task's
// cursor with an unknown lag, reset --to CURSOR moves it (exit 0) and
// --to latest on a feed that cannot tell its head exits 2.
func TestStream_CLI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		after, _ := strconv.Atoi(r.Header.Get("Last-Event-ID"))
		w.Header().Set("Content-Type", "text/event-stream")
		for k := after + 1; k <= 5; k++ {
			fmt.Fprintf(w, "id: %d\ndata: {\"id\":%d}\n\n", k, k)
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	path := streamDagfile(t, "sse://"+strings.TrimPrefix(srv.URL, "http://")+"/e")
	if code, _ := runCmd(t, "once", "-f", path, "--task", "t"); code != ExitOK {
		t.Fatalf("once: exit %d", code)
	}
	if code, out := runCmd(t, "status", "-f", path); code != ExitOK || !strings.Contains(out, " 5 ") || !strings.Contains(out, "unknown") {
		t.Errorf("status: exit %d\n%s\nwant exit 0, position 5, lag unknown", code, out)
	}
	if code, _ := runCmd(t, "reset", "-f", path, "--task", "t", "--to", "3"); code != ExitOK {
		t.Errorf("reset --to 3: exit %d, want 0", code)
	}
	if code, out := runCmd(t, "status", "-f", path); code != ExitOK || !strings.Contains(out, " 3 ") {
		t.Errorf("status after reset: exit %d\n%s\nwant position 3", code, out)
	}
	if code, _ := runCmd(t, "reset", "-f", path, "--task", "t", "--to", "latest"); code != ExitBadInput {
		t.Errorf("reset --to latest of an SSE feed: exit %d, want %d", code, ExitBadInput)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	down := streamDagfile(t, "sse://"+strings.TrimPrefix(closed.URL, "http://")+"/e")
	if code, _ := runCmd(t, "once", "-f", down, "--task", "t"); code != ExitFailure {
		t.Errorf("once over a source that is down: exit %d, want %d", code, ExitFailure)
	}
}
