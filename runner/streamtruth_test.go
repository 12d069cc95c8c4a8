package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/stream/streamtest"
)

// Streams that tell the truth (issue 18.9): a source that is down fails
// the run, an outage within a run is waited out, max_bad_ratio is judged
// over min_events, a feed that only replays ends with a warning.

// truthYAML is one stream task "t" into an embedded Iceberg lake; SRC is
// the source URL and OPTS more stream options.
const truthYAML = `version: 1
connections:
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  t:
    stream: {source: "SRC", sink: lake:raw.t, batch_interval: 300ms, cursor: seq OPTS}
    contract:
      columns:
        - {name: id, type: BIGINT, required: true}
        - {name: seq, type: BIGINT}
      max_bad_ratio: RATIO
`

// newTruthDAG writes truthYAML with the source, options and max_bad_ratio.
func newTruthDAG(t *testing.T, src, opts, ratio string) *streamDAG {
	t.Helper()
	d := &streamDAG{dir: t.TempDir(), schema: "raw"}
	d.path = filepath.Join(d.dir, "weir.yaml")
	d.sinkURL = ResolveURL("iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake", d.dir)
	if opts != "" {
		opts = ", " + opts
	}
	writeFile(t, d.path, strings.NewReplacer("SRC", src, " OPTS", opts, "RATIO", ratio).Replace(truthYAML))
	return d
}

// truthFeed is an SSE and WebSocket server of items {"id":k,"seq":k}
// (or bad[k]), k from 1: SSE resumes after Last-Event-ID, WebSocket after
// the subscribe message's cursor, unless replay is set (it then sends
// every item from the first, paced by gap). After item outageAt it drops
// the connection and answers 503 for outage.
type truthFeed struct {
	mu       sync.Mutex
	n        int // items 1..n are served
	bad      map[int]string
	replay   bool
	gap      time.Duration
	outageAt int
	outage   time.Duration
	downTill time.Time
	closeAll bool // end every connection once it sent what there is
	srv      *httptest.Server
}

func newTruthFeed(t *testing.T, f *truthFeed) *truthFeed {
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *truthFeed) item(k int) string {
	if p, ok := f.bad[k]; ok {
		return p
	}
	return fmt.Sprintf(`{"id":%d,"seq":%d}`, k, k)
}

func (f *truthFeed) sseURL() string {
	return "sse://" + strings.TrimPrefix(f.srv.URL, "http://") + "/events"
}
func (f *truthFeed) wsURL() string {
	return "ws://" + strings.TrimPrefix(f.srv.URL, "http://") + "/feed?subscribe=%7Bcursor%7D"
}

// next waits for the item after k; false when the connection is to end
// (ctx ended, or the outage begins: the connection drops and the server
// answers 503 for outage).
func (f *truthFeed) next(ctx context.Context, k int) (string, bool) {
	for ctx.Err() == nil {
		f.mu.Lock()
		n := f.n
		if k == f.outageAt && f.outage > 0 {
			f.downTill, f.outageAt = time.Now().Add(f.outage), 0
			f.mu.Unlock()
			return "", false
		}
		f.mu.Unlock()
		if k < n {
			if f.replay {
				time.Sleep(f.gap)
			}
			return f.item(k + 1), true
		}
		if f.closeAll {
			return "", false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return "", false
}

func (f *truthFeed) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	down := time.Now().Before(f.downTill)
	f.mu.Unlock()
	if down {
		http.Error(w, "outage", http.StatusServiceUnavailable)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/feed") {
		f.serveWS(w, r)
		return
	}
	k, _ := strconv.Atoi(r.Header.Get("Last-Event-ID"))
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "retry: 50\n\n")
	w.(http.Flusher).Flush()
	for {
		it, ok := f.next(r.Context(), k)
		if !ok {
			return
		}
		k++
		fmt.Fprintf(w, "id: %d\ndata: %s\n\n", k, it)
		w.(http.Flusher).Flush()
	}
}

func (f *truthFeed) serveWS(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := r.Context()
	_, msg, err := c.Read(ctx)
	if err != nil {
		return
	}
	ctx = c.CloseRead(ctx) // ends when the client goes
	k, _ := strconv.Atoi(string(msg))
	if f.replay {
		k = 0
	}
	for {
		it, ok := f.next(ctx, k)
		if !ok {
			return
		}
		k++
		if c.Write(ctx, websocket.MessageText, []byte(it)) != nil {
			return
		}
	}
}

// TestStream_SourceDown: an available_now run whose source refuses
// connections, answers 503 or whose broker is gone fails (not a drained
// source: exit 1, which the generated code retries) after
// reconnect_attempts, naming the source with its password redacted. It
// once exited 0 with nothing read.
func TestStream_SourceDown(t *testing.T) {
	closedHost := refusedAddr(t)
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer busy.Close()
	busyHost := strings.TrimPrefix(busy.URL, "http://")
	gone, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "ev"))
	if err != nil {
		t.Fatal(err)
	}
	goneAddr := gone.ListenAddrs()[0]
	gone.Close()
	tests := []struct{ name, url, host string }{
		{"sse refused", "sse://u:s3cret@" + closedHost + "/events", closedHost},
		{"sse 503", "sse://u:s3cret@" + busyHost + "/events", busyHost},
		{"ws refused", "ws://u:s3cret@" + closedHost + "/feed", closedHost},
		{"ws 503", "ws://u:s3cret@" + busyHost + "/feed", busyHost},
		{"kafka gone", "kafka://" + goneAddr + "/ev", goneAddr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := newTruthDAG(t, tt.url, "reconnect_attempts: 2", "1")
			r, err := Load(d.path, Options{Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			ctx, cancel := context.WithTimeout(testContext(t), 60*time.Second)
			defer cancel()
			start := time.Now()
			rep, err := r.Once(ctx, "t")
			if err == nil {
				t.Fatalf("run of a source that is down succeeded (%d events in): it must fail", rep.RowsIn)
			}
			if errors.Is(err, routes.ErrBadInput) || errors.Is(err, routes.ErrLocked) || ctx.Err() != nil {
				t.Fatalf("error %v: want a plain failure (exit 1, retried), not bad input, a lock or a hang", err)
			}
			msg := routes.Redact(err.Error())
			if !strings.Contains(msg, tt.host) || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q: want the source %s named, without its password", err, tt.host)
			}
			if !strings.HasPrefix(tt.url, "kafka") && !strings.Contains(msg, "unreachable after 2 reconnect attempts") {
				t.Errorf("error %q: want it to say the source was unreachable after reconnect_attempts (2)", err)
			}
			t.Logf("%s after %s", err, time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestStream_OutageWithinRun: a feed that drops mid-stream and answers
// 503 for longer than several batch intervals, then comes back, is read
// to its end in one run: every event lands exactly once. The outage was
// once taken for the end of the stream (exit 0, half the feed).
func TestStream_OutageWithinRun(t *testing.T) {
	const n = 40
	for _, kind := range []string{"sse", "ws"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f := newTruthFeed(t, &truthFeed{n: n, outageAt: n / 2, outage: 1500 * time.Millisecond})
			src := f.sseURL()
			if kind == "ws" {
				src = f.wsURL()
			}
			d := newTruthDAG(t, src, "batch_size: 7, reconnect_attempts: 20", "1")
			r, err := Load(d.path, Options{Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			rep := once(t, r, "t")
			if got := d.ids(t, "t"); !slices.Equal(got, wantSeq(n)) {
				t.Errorf("after one run through a %s outage: ids %v, want each of 1..%d once (%d events in)", f.outage, got, n, rep.RowsIn)
			}
		})
	}
}

// TestStream_ServerClosesWhenDone: a feed whose server ends every
// connection once it has sent what there is (it is reachable, with
// nothing new) is drained: the run ends with every event, not waiting
// for the reconnects forever.
func TestStream_ServerClosesWhenDone(t *testing.T) {
	for _, kind := range []string{"sse", "ws"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f := newTruthFeed(t, &truthFeed{n: 12, closeAll: true})
			src := f.sseURL()
			if kind == "ws" {
				src = f.wsURL()
			}
			d := newTruthDAG(t, src, "", "1")
			r, err := Load(d.path, Options{Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			ctx, cancel := context.WithTimeout(testContext(t), 40*time.Second)
			defer cancel()
			if _, err := r.Once(ctx, "t"); err != nil || ctx.Err() != nil {
				t.Fatalf("run: %v (context: %v)", err, ctx.Err())
			}
			if got := d.ids(t, "t"); !slices.Equal(got, wantSeq(12)) {
				t.Errorf("ids %v, want 1..12 once", got)
			}
		})
	}
}

func wantSeq(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(i + 1)
	}
	return out
}

// TestStream_BadRatioWindow: max_bad_ratio is judged over the events a
// run checked once they reach min_events, not per batch: one malformed
// event in a 1-event batch of a slow feed is quarantined and the run
// exits 0 (it once failed every retry, stuck for good), while a feed bad
// beyond the ratio over min_events still fails.
func TestStream_BadRatioWindow(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		bad     []int
		opts    string
		fail    bool
		wantIDs int
	}{
		{"one malformed in a 1-event batch", 6, []int{3}, "batch_size: 1", false, 5},
		{"a third bad, fewer than the default min_events", 30, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, "batch_size: 5", false, 20},
		{"bad beyond the ratio over min_events", 12, []int{2, 3, 5, 6, 8, 9}, "batch_size: 2, min_events: 4", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bad := map[int]string{}
			for _, k := range tt.bad {
				bad[k] = fmt.Sprintf("not json %d", k)
			}
			f := newTruthFeed(t, &truthFeed{n: tt.n, bad: bad})
			d := newTruthDAG(t, f.sseURL(), tt.opts, "0.2")
			r, err := Load(d.path, Options{Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			rep, err := r.Once(testContext(t), "t")
			if tt.fail {
				if err == nil || !strings.Contains(err.Error(), "max_bad_ratio") {
					t.Fatalf("a feed half bad over min_events: err %v, want the ratio exceeded", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("slow feed with %d malformed of %d: %v", len(tt.bad), tt.n, err)
			}
			if got := len(d.ids(t, "t")); got != tt.wantIDs {
				t.Errorf("%d rows, want %d", got, tt.wantIDs)
			}
			if q := d.rows(t, "t"+QuarantineSuffix, "_weir_payload"); len(q) != len(tt.bad) {
				t.Errorf("quarantine %q, want the %d malformed events", q, len(tt.bad))
			}
			if rep.Contract == nil || !rep.Contract.Passed {
				t.Errorf("report contract %+v: want passed", rep.Contract)
			}
		})
	}
}

// TestStream_WSReplay: a WebSocket feed that ignores the subscribe cursor
// and replays from its first event, slower than batch_interval, is read
// past the replay to the new events (replays are progress, not silence;
// they once ended every run with 0 events); when it has nothing new the
// run ends with a warning naming the cursor.
func TestStream_WSReplay(t *testing.T) {
	f := newTruthFeed(t, &truthFeed{n: 20, replay: true, gap: 30 * time.Millisecond})
	d := newTruthDAG(t, f.wsURL(), "", "1")
	var log strings.Builder
	r, err := Load(d.path, Options{Log: &syncWriter{w: &log}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	once(t, r, "t")
	f.mu.Lock()
	f.n = 30
	f.mu.Unlock()
	rep := once(t, r, "t") // 20 replayed events take 600 ms: two batch intervals
	if got := d.ids(t, "t"); !slices.Equal(got, wantSeq(30)) {
		t.Errorf("after the replaying run (%d events in): ids %v, want each of 1..30 once", rep.RowsIn, got)
	}
	log.Reset()
	rep = once(t, r, "t")
	if rep.RowsIn != 0 || !strings.Contains(log.String(), `cursor "30"`) {
		t.Errorf("a run over a feed that only replays: %d events in, log %q: want 0 and a warning naming cursor \"30\"", rep.RowsIn, log.String())
	}
}

// syncWriter serializes writes (the runner's warnings come from several goroutines).
type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestStream_StatusReset: status shows a stream task's committed cursor
// and, for Kafka, its lag (high-water marks minus the cursor), else an
// unknown lag; reset --to earliest|latest|CURSOR writes the cursor the
// next run reads from. Status once failed on stream tasks and reset
// refused them.
func TestStream_StatusReset(t *testing.T) {
	t.Run("kafka", func(t *testing.T) {
		t.Parallel()
		p := streamtest.NewKafka(t)
		p.Publish(t, 20) // 10 records in each of two partitions
		d := newTruthDAG(t, p.URL(""), "", "1")
		r, err := Load(d.path, Options{Log: testLog{t}})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		checkStatus(t, r, false, "", 20, true)
		once(t, r, "t")
		checkStatus(t, r, true, "0=10&1=10", 0, true)
		p.Publish(t, 30)
		checkStatus(t, r, true, "0=10&1=10", 10, true)
		steps := []struct {
			to       string
			cursor   string
			behind   int64
			rowsIn   int64
			badInput bool
		}{
			{"latest", "0=15&1=15", 0, 0, false},
			{"earliest", "0=0&1=0", 30, 30, false},
			{"0=14&1=15", "0=14&1=15", 1, 1, false},
			{"zero=1", "", 0, 0, true},
		}
		for _, s := range steps {
			checkReset(t, r, s.to, s.cursor, s.behind, s.rowsIn, s.badInput, true)
		}
	})
	t.Run("sse", func(t *testing.T) {
		t.Parallel()
		f := newTruthFeed(t, &truthFeed{n: 10})
		d := newTruthDAG(t, f.sseURL(), "", "1")
		r, err := Load(d.path, Options{Log: testLog{t}})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		checkStatus(t, r, false, "", 0, false)
		checkReset(t, r, "7", "7", 0, 3, false, false) // before the first run: the sink is created from the contract
		checkStatus(t, r, true, "10", 0, false)
		checkReset(t, r, "4", "4", 0, 6, false, false)
		checkReset(t, r, "latest", "", 0, 0, true, false)
		checkReset(t, r, "earliest", "", 0, 10, false, false)
		if n := len(d.ids(t, "t")); n != 19 {
			t.Errorf("append sink: %d rows after runs of 3, 6 and 10 events, want 19", n)
		}
	})
}

// checkStatus checks task t's status: committed, cursor, lag.
func checkStatus(t *testing.T, r *Runner, committed bool, cursor string, behind int64, known bool) {
	t.Helper()
	sel, err := r.Select("t")
	if err != nil {
		t.Fatal(err)
	}
	st := r.Status(testContext(t), sel)[0]
	if st.Error != "" || len(st.Sources) != 1 {
		t.Fatalf("status: %+v", st)
	}
	s := st.Sources[0]
	if st.Committed != committed || s.Cursor != cursor || s.Lag.Known != known || (known && s.Lag.Behind != behind) || st.Lag != s.Lag.Behind {
		t.Errorf("status: committed %v, cursor %q, lag %+v (task lag %d); want committed %v, cursor %q, behind %d known %v",
			st.Committed, s.Cursor, s.Lag, st.Lag, committed, cursor, behind, known)
	}
}

// checkReset resets task t to to, checks the status, then runs it and
// checks the events it read.
func checkReset(t *testing.T, r *Runner, to, cursor string, behind, rowsIn int64, badInput, known bool) {
	t.Helper()
	_, err := r.Reset(testContext(t), "t", to)
	if badInput {
		if !errors.Is(err, routes.ErrBadInput) {
			t.Errorf("reset --to %s: %v, want bad input", to, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("reset --to %s: %v", to, err)
	}
	checkStatus(t, r, true, cursor, behind, known)
	if rep := once(t, r, "t"); rep.RowsIn != rowsIn {
		t.Errorf("run after reset --to %s: %d events in, want %d", to, rep.RowsIn, rowsIn)
	}
}

// TestStream_QuarantineOnce: into PostgreSQL the quarantine is committed in
// the sink's own transaction, so a run killed just before that commit
// leaves nothing of its batch, and the next run quarantines each bad
// event exactly once (it was once committed first, and quarantined again
// on the replay).
func TestStream_QuarantineOnce(t *testing.T) {
	const n = 30
	p := streamtest.NewSSE(t)
	d := newStreamDAG(t, p, "postgres")
	p.Publish(t, n)
	runKilled(t, d.path, "ev_append", "before-commit")
	r, err := Load(d.path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	once(t, r, "ev_append")
	payloads := d.rows(t, "ev_append"+QuarantineSuffix, "_weir_payload")
	slices.Sort(payloads)
	var want []string
	for k := 1; k <= n; k++ {
		if pl, bad := streamtest.BadPayload(k); bad {
			want = append(want, pl)
		}
	}
	slices.Sort(want)
	if !slices.Equal(payloads, want) {
		t.Errorf("quarantine after a kill before the sink's commit: %q, want each of %q once", payloads, want)
	}
	if got := d.ids(t, "ev_append"); !slices.Equal(got, wantIDs(n)) {
		t.Errorf("sink ids %v, want %v", got, wantIDs(n))
	}
}

// TestStream_PubSubDown: an available_now run of a pubsub:// task whose
// service cannot be reached fails (exit 1) after reconnect_attempts,
// naming the subscription. The client's streaming pull retries quietly
// for ever, so the run once ended at its first empty batch with exit 0.
// (A child process: PUBSUB_EMULATOR_HOST is the process's.)
func TestStream_PubSubDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := l.Addr().String()
	l.Close()
	d := newTruthDAG(t, "pubsub://weir-test/weir_down_sub", "reconnect_attempts: 2", "1")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperDagfile+"="+d.path, helperTask+"=t", "PUBSUB_EMULATOR_HOST="+down)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("still running after 60 s\n%s", stderr.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(stderr.String(), "unreachable after 2 reconnect attempts") ||
		!strings.Contains(stderr.String(), "weir_down_sub") {
		t.Errorf("run with the Pub/Sub service down: %v\n%s\nwant exit 1 naming the subscription, unreachable after 2 reconnect attempts", err, stderr.String())
	}
}

// TestStream_BadRatioAcrossRuns: the max_bad_ratio window spans runs
// until it holds min_events (it is kept in the sink beside the cursor):
// a feed whose every event is bad, arriving one event per run, fails the
// run that brings the window to min_events, and the runs after it (the
// failing batch is read again), where each run judged only its own
// events and none ever failed. A judged window starts again: two bad
// events among the next min_events fail, though over the whole feed the
// ratio holds.
func TestStream_BadRatioAcrossRuns(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		bad      []int
		failFrom int // the first run that must fail; runs after it fail too
	}{
		{"every event bad, one per run", 7, []int{1, 2, 3, 4, 5, 6, 7}, 5},
		{"a judged window starts again", 10, []int{9, 10}, 10},
		{"within the ratio", 10, []int{5, 10}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bad := map[int]string{}
			for _, k := range tt.bad {
				bad[k] = fmt.Sprintf("not json %d", k)
			}
			f := newTruthFeed(t, &truthFeed{bad: bad})
			d := newTruthDAG(t, f.sseURL(), "batch_size: 1, min_events: 5", "0.2")
			r, err := Load(d.path, Options{Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for k := 1; k <= tt.n; k++ {
				f.mu.Lock()
				f.n = k
				f.mu.Unlock()
				rep, err := r.Once(testContext(t), "t")
				wantFail := tt.failFrom > 0 && k >= tt.failFrom
				switch {
				case wantFail && (err == nil || !strings.Contains(err.Error(), "max_bad_ratio")):
					t.Fatalf("run %d (feed 1..%d, bad %v): err %v (%d events in), want max_bad_ratio exceeded", k, k, tt.bad, err, rep.RowsIn)
				case !wantFail && err != nil:
					t.Fatalf("run %d (feed 1..%d, bad %v): %v", k, k, tt.bad, err)
				case !wantFail && rep.RowsIn != 1:
					t.Fatalf("run %d: %d events in, want 1", k, rep.RowsIn)
				}
			}
		})
	}
}

// refusedAddr is a 127.0.0.1 address that refuses every connection for
// the whole test: a socket bound to it and never listening holds the port,
// so no other listener of the test binary can be handed it (a closed
// httptest server's port was, once: an SSE client meant to be refused
// connected to another test's stream and waited).
func refusedAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}
