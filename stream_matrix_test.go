package weir_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
	"github.com/weirhq/weir/routes/stream/streamtest"
	"github.com/weirhq/weir/runner"
)

// Stream sources are not tables, so their cells are not routestest.RunCell:
// a stream task (merge on id, with a contract) lands a real protocol
// peer's feed in the destination in two available_now runs, and the cell
// checks every good event is there once and the bad ones are quarantined.
// The crash cases are in runner/stream_test.go.

// streamPeers start a feed for each stream source.
var streamPeers = map[string]func(testing.TB) streamtest.Peer{
	"sse":    streamtest.NewSSE,
	"ws":     streamtest.NewWS,
	"kafka":  streamtest.NewKafka,
	"pubsub": streamtest.NewPubSub,
	"sqs":    streamtest.NewSQS,
}

// checkStreamPair runs the stream cell of an implemented pair.
func checkStreamPair(t *testing.T, r routes.Route) {
	if !r.Implemented {
		if r.Reason == "" {
			t.Errorf("%s → %s is neither implemented nor deferred with a reason", r.Source, r.Destination)
		}
		return
	}
	t.Run(r.Destination, func(t *testing.T) {
		newPeer, srcOK := streamPeers[r.Source]
		df, dstOK := fixtures[r.Destination]
		if !srcOK || !dstOK {
			t.Fatalf("%s → %s is declared implemented but has no peer or fixture to exercise it", r.Source, r.Destination)
		}
		runStreamCell(t, newPeer(t), df(t))
	})
}

const streamCellYAML = `version: 1
connections:
  dst: %q
tasks:
  ev:
    stream: {source: %q, sink: "dst:%s", batch_size: 7, batch_interval: 1s, materialization: merge, key: [id], cursor: seq}
    contract:
      columns:
        - {name: id, type: BIGINT, required: true}
        - {name: seq, type: BIGINT}
        - {name: v, type: VARCHAR}
`

func runStreamCell(t *testing.T, p streamtest.Peer, dst routestest.Fixture) {
	ctx := routestest.Context(t, 2*time.Minute)
	table := routestest.Name("ev")
	path := filepath.Join(t.TempDir(), "weir.yaml")
	body := fmt.Sprintf(streamCellYAML, dst.URL(), p.URL("ev"), dst.Ref(table))
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := runner.Load(path, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var want []string
	for _, id := range streamtest.GoodIDs(45) {
		want = append(want, fmt.Sprint(id))
	}
	var got []string
	for _, n := range []int{30, 45} {
		p.Publish(t, n)
		// Pub/Sub may hand a message over after an available_now run
		// stopped: it is redelivered to a later run.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
			if _, err := r.Once(ctx, "ev"); err != nil {
				t.Fatalf("run after %d events: %v", n, err)
			}
			got = readColumn(t, ctx, dst, table, "id")
			if len(got) >= len(streamtest.GoodIDs(n)) || time.Now().After(deadline) {
				break
			}
		}
	}
	slices.SortFunc(got, func(a, b string) int { return len(a)*1000 - len(b)*1000 + compare(a, b) })
	if !slices.Equal(got, want) {
		t.Errorf("sink ids %v, want %v", got, want)
	}
	if q := readColumn(t, ctx, dst, table+runner.QuarantineSuffix, "_weir_payload"); len(q) < streamtest.BadCount(45) {
		t.Errorf("quarantine %q, want the %d bad events", q, streamtest.BadCount(45))
	}
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// readColumn reads one column of a destination table as text.
func readColumn(t *testing.T, ctx context.Context, dst routestest.Fixture, table, col string) []string {
	t.Helper()
	ep, err := routes.Open(ctx, dst.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	src := ep.(routes.Source)
	ref, err := routes.ParseTableRef(dst.Ref(table))
	if err != nil {
		t.Fatal(err)
	}
	info, err := src.Probe(ctx, ref)
	if err != nil {
		t.Fatalf("probe %s: %v", ref, err)
	}
	s, err := incremental.ReadTable(ctx, src, info, routes.Budget{}.Fill(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	var out []string
	for s.Next() {
		rec := s.RecordBatch()
		c := rec.Column(rec.Schema().FieldIndices(col)[0])
		for i := 0; i < c.Len(); i++ {
			out = append(out, c.ValueStr(i))
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
