package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/stream/streamtest"
)

// streamYAML has two stream tasks over one source: append and merge. SRC
// is replaced by each task's source URL, SINK by the sink's connection
// and schema, CONN by the connection.
const streamYAML = `version: 1
connections:
  CONN
tasks:
  ev_append:
    stream: {source: "SRC_ev_append", sink: SINK.ev_append, batch_size: 10, batch_interval: 1s, cursor: seq}
    contract: &c
      columns:
        - {name: id, type: BIGINT, required: true}
        - {name: seq, type: BIGINT}
        - {name: v, type: VARCHAR}
  ev_merge:
    stream: {source: "SRC_ev_merge", sink: SINK.ev_merge, batch_size: 10, batch_interval: 1s, cursor: seq, materialization: merge, key: [id]}
    contract: *c
  ev_cont:
    stream: {source: "SRC_ev_cont", sink: SINK.ev_cont, batch_size: 10, batch_interval: 200ms, cursor: seq, trigger: continuous}
    contract: *c
`

// streamDAG is a dagfile of stream tasks reading one peer into Postgres
// (a fresh schema) or an embedded Iceberg lake.
type streamDAG struct {
	path, dir string
	sinkURL   string // the sink connection's URL
	schema    string
}

var streamSinks = []string{"postgres", "iceberg"}

func newStreamDAG(t *testing.T, p streamtest.Peer, sink string) *streamDAG {
	t.Helper()
	d := &streamDAG{dir: t.TempDir()}
	d.path = filepath.Join(d.dir, "weir.yaml")
	var conn string
	switch sink {
	case "postgres":
		fx := postgrestest.New(t)
		d.schema, conn = fx.Schema, "pg: ${WEIR_TEST_PG}"
		d.sinkURL = os.Getenv(postgrestest.Env)
	case "iceberg":
		d.schema, conn = "raw", "lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake"
		d.sinkURL = ResolveURL("iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake", d.dir)
	}
	connName, _, _ := strings.Cut(conn, ":")
	body := strings.NewReplacer("CONN", conn, "SINK.", connName+":"+d.schema+".").Replace(streamYAML)
	for _, task := range []string{"ev_append", "ev_merge", "ev_cont"} {
		body = strings.ReplaceAll(body, "SRC_"+task, p.URL(task))
	}
	writeFile(t, d.path, body)
	return d
}

// rows reads a sink table: the values of column col, as text.
func (d *streamDAG) rows(t *testing.T, table, col string) []string {
	t.Helper()
	ctx := testContext(t)
	ep, err := routes.Open(ctx, d.sinkURL)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	src := ep.(routes.Source)
	info, err := src.Probe(ctx, routes.TableRef{Schema: d.schema, Name: table})
	if err != nil {
		t.Fatalf("probe %s: %v", table, err)
	}
	s, err := incremental.ReadTable(ctx, src, info, routes.Budget{}.Fill(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	var out []string
	for s.Next() {
		rec := s.RecordBatch()
		idx := rec.Schema().FieldIndices(col)
		if len(idx) == 0 {
			t.Fatalf("%s has no column %s: %s", table, col, rec.Schema())
		}
		c := rec.Column(idx[0])
		for i := 0; i < c.Len(); i++ {
			out = append(out, c.(interface{ ValueStr(int) string }).ValueStr(i))
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// ids returns the sink's ids, sorted.
func (d *streamDAG) ids(t *testing.T, table string) []string {
	ids := d.rows(t, table, "id")
	slices.SortFunc(ids, func(a, b string) int { return len(a)*1000 - len(b)*1000 + strings.Compare(a, b) })
	return ids
}

func wantIDs(n int) []string {
	var out []string
	for _, id := range streamtest.GoodIDs(n) {
		out = append(out, fmt.Sprint(id))
	}
	return out
}

// streamPeers are the sources under test.
var streamPeers = []struct {
	name     string
	new      func(testing.TB) streamtest.Peer
	seekable bool // resumes from the sink's cursor (no redelivery wait)
}{
	{"sse", streamtest.NewSSE, true},
	{"ws", streamtest.NewWS, true},
	{"kafka", streamtest.NewKafka, true},
	{"pubsub", streamtest.NewPubSub, false},
	{"sqs", streamtest.NewSQS, false},
}

// TestStream_KillResume: a run killed after its sink commit and before
// the source's commit (and one killed before the sink commit), then run
// again, loses no event; append may hold a replayed batch twice, merge
// holds each key once; bad events are in the quarantine; available_now
// runs end once the source is drained.
func TestStream_KillResume(t *testing.T) {
	const n = 60
	for _, pc := range streamPeers {
		for _, sink := range streamSinks {
			t.Run(pc.name+"/"+sink, func(t *testing.T) {
				t.Parallel()
				p := pc.new(t)
				d := newStreamDAG(t, p, sink)
				p.Publish(t, n/2)
				runKilled(t, d.path, "ev_append", sourceCommitPhase)
				if sink == "postgres" {
					// Iceberg's lease of a killed run expires after a
					// minute (routes/iceberg DefaultLeaseTTL): too long here.
					runKilled(t, d.path, "ev_merge", "before-commit")
					if !pc.seekable {
						time.Sleep(11 * time.Second) // the dead run's messages come back after the 10 s ack deadline (visibility timeout)
					}
				}
				runKilled(t, d.path, "ev_merge", sourceCommitPhase)
				p.Publish(t, n)
				r, err := Load(d.path, Options{Log: testLog{t}})
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				for _, task := range []string{"ev_append", "ev_merge"} {
					runs := drain(t, r, d, task, n)
					if pc.seekable && runs != 1 {
						t.Errorf("%s: %d available_now runs to drain a seekable source, want 1", task, runs)
					}
				}
				want := wantIDs(n)
				got := d.ids(t, "ev_append")
				if dedup := slices.Compact(slices.Clone(got)); !slices.Equal(dedup, want) {
					t.Errorf("append: ids %v, want each of %v at least once", dedup, want)
				}
				if pc.seekable && len(got) != len(want) {
					t.Errorf("append from a seekable source: %d rows, want %d (resumed from the sink's cursor)", len(got), len(want))
				}
				if got := d.ids(t, "ev_merge"); !slices.Equal(got, want) {
					t.Errorf("merge: ids %v, want exactly %v", got, want)
				}
				for _, task := range []string{"ev_append", "ev_merge"} {
					checkQuarantine(t, d, task+QuarantineSuffix, n)
				}
			})
		}
	}
}

// drain runs an available_now task until the sink holds every good id of
// the feed (Pub/Sub redelivers the dead run's messages only when their ack
// deadline passes) and returns the runs it took.
func drain(t *testing.T, r *Runner, d *streamDAG, task string, n int) int {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for runs := 1; ; runs++ {
		start := time.Now()
		rep := once(t, r, task)
		t.Logf("%s run %d: %d events in, %d rows out, %d quarantined, cursor %q → %q in %s", task, runs,
			rep.RowsIn, rep.RowsOut, rep.Quarantined, rep.Offsets[streamMark].From, rep.Offsets[streamMark].To, time.Since(start).Round(time.Millisecond))
		got := slices.Compact(d.ids(t, task))
		if len(got) >= len(streamtest.GoodIDs(n)) || time.Now().After(deadline) {
			return runs
		}
		time.Sleep(time.Second)
	}
}

// checkQuarantine: every bad payload of the feed is quarantined with a reason.
func checkQuarantine(t *testing.T, d *streamDAG, table string, n int) {
	t.Helper()
	payloads, reasons := d.rows(t, table, "_weir_payload"), d.rows(t, table, "_weir_reason")
	for k := 1; k <= n; k++ {
		if p, bad := streamtest.BadPayload(k); bad && !slices.Contains(payloads, p) {
			t.Errorf("%s: payload %q is not quarantined (have %q)", table, p, payloads)
		}
	}
	if len(payloads) < streamtest.BadCount(n) {
		t.Errorf("%s: %d rows, want at least %d", table, len(payloads), streamtest.BadCount(n))
	}
	for i, r := range reasons {
		if r == "" || r == "(null)" {
			t.Errorf("%s: payload %q has no reason", table, payloads[i])
		}
	}
}

// TestStream_ContinuousSIGTERM: a continuous task runs until SIGTERM, then
// commits the batch it was reading and exits 0; run again (in process,
// until the feed is in, then cancelled), it goes on from its cursor: no
// event is lost, and a seekable source delivers none twice.
func TestStream_ContinuousSIGTERM(t *testing.T) {
	for _, pc := range streamPeers {
		t.Run(pc.name, func(t *testing.T) {
			t.Parallel()
			p := pc.new(t)
			d := newStreamDAG(t, p, "postgres")
			p.Publish(t, 30)
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), helperDagfile+"="+d.path, helperTask+"=ev_cont", helperSIGTERM+"=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			waitFor(t, 60*time.Second, func() bool { return tableHas(t, d, "ev_cont", 1) })
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("after SIGTERM: %v\n%s", err, stderr.String())
				}
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("still running 30 s after SIGTERM\n%s", stderr.String())
			}
			p.Publish(t, 40)
			runUntil(t, d, "ev_cont", 40)
			got := d.ids(t, "ev_cont")
			if dedup := slices.Compact(slices.Clone(got)); !slices.Equal(dedup, wantIDs(40)) {
				t.Errorf("ids %v, want each of %v", dedup, wantIDs(40))
			}
			if pc.seekable && len(got) != len(wantIDs(40)) {
				t.Errorf("%d rows for %d events: the SIGTERM run's cursor was not committed with its rows", len(got), len(wantIDs(40)))
			}
		})
	}
}

// runUntil runs a continuous task in process until its sink holds the
// good ids of n items, then cancels it: it must return without an error.
func runUntil(t *testing.T, d *streamDAG, task string, n int) {
	t.Helper()
	r, err := Load(d.path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := r.Once(ctx, task)
		done <- err
	}()
	deadline := time.Now().Add(60 * time.Second)
	for len(slices.Compact(d.ids(t, task))) < len(streamtest.GoodIDs(n)) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s after cancel: %v", task, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s still running 30 s after cancel", task)
	}
}

// tableHas reports whether a sink table exists with at least n rows.
func tableHas(t *testing.T, d *streamDAG, table string, n int) bool {
	ctx := testContext(t)
	ep, err := routes.Open(ctx, d.sinkURL)
	if err != nil {
		return false
	}
	defer ep.Close()
	if _, err := ep.(routes.Source).Probe(ctx, routes.TableRef{Schema: d.schema, Name: table}); err != nil {
		return false
	}
	return len(d.rows(t, table, "id")) >= n
}

func waitFor(t *testing.T, d time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", d)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
