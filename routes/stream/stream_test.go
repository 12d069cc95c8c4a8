package stream

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/stream/streamtest"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, raw string
		ok        bool
	}{
		{"object", `{"id":9007199254740993,"v":"x"}`, true},
		{"not json", `not json`, false},
		{"array", `[1,2]`, false},
		{"null", `null`, false},
		{"trailing", `{"a":1} {"a":2}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := Parse([]byte(tt.raw))
			if (ev.Err == nil) != tt.ok {
				t.Fatalf("Parse(%s): err %v, want ok=%v", tt.raw, ev.Err, tt.ok)
			}
			if tt.ok && fmt.Sprint(ev.Value["id"]) != "9007199254740993" {
				t.Errorf("id %v: a 64-bit integer lost its digits", ev.Value["id"])
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		n    int
		want time.Duration
	}{{1, 100 * time.Millisecond}, {2, 200 * time.Millisecond}, {4, 800 * time.Millisecond}, {30, time.Second}}
	for _, tt := range tests {
		if got := Backoff(tt.n, 100*time.Millisecond, time.Second); got != tt.want {
			t.Errorf("Backoff(%d) = %s, want %s", tt.n, got, tt.want)
		}
	}
}

func TestCompareCursors(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{{"9", "10", -1}, {"10", "10", 0}, {"b", "a", 1}, {"2026-01-02", "2026-01-10", -1}}
	for _, tt := range tests {
		if got := CompareCursors(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareCursors(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestKafkaCursor_RoundTrip(t *testing.T) {
	m := map[int32]int64{0: 12, 1: 40, 10: 0}
	s := encodeKafkaCursor(m)
	if s != "0=12&1=40&10=0" {
		t.Errorf("encode: %q", s)
	}
	back, err := decodeKafkaCursor(s)
	if err != nil || len(back) != 3 || back[1] != 40 {
		t.Errorf("decode %q: %v %v", s, back, err)
	}
	if _, err := decodeKafkaCursor("x=1"); err == nil {
		t.Error("decode x=1: no error")
	}
}

// TestSSE_ReconnectResume: multi-line data, comments and retry: are parsed;
// a dropped connection is resumed with Last-Event-ID; Seek resumes a new
// source after a cursor.
func TestSSE_ReconnectResume(t *testing.T) {
	var mu sync.Mutex
	var lastIDs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		switch r.Header.Get("Last-Event-ID") {
		case "":
			fmt.Fprint(w, ": hello\nretry: 10\n\nid: 1\ndata: {\"a\":\ndata: 1}\n\nid: 2\ndata: {\"a\":2}\n\n")
		case "2":
			fmt.Fprint(w, "id: 3\ndata: {\"a\":3}\n\n") // then the connection drops
		default:
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u := "sse://" + strings.TrimPrefix(srv.URL, "http://") + "/e"
	src, err := Open(ctx, u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := 0; i < 3; i++ {
		ev, err := src.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s@%s", ev.Raw, src.Cursor()))
	}
	src.Close()
	want := []string{"{\"a\":\n1}@1", `{"a":2}@2`, `{"a":3}@3`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events %q, want %q", got, want)
	}
	mu.Lock()
	// The first connection ends after id 2; the second resumes after it.
	if len(lastIDs) < 2 || lastIDs[0] != "" || lastIDs[1] != "2" {
		t.Errorf("Last-Event-ID per connection %q, want \"\" then \"2\"", lastIDs)
	}
	mu.Unlock()
}

// TestKafka_SeekAfterJoin: the group join starts when the source opens,
// before the runner reads the sink's cursor; a Seek that comes after the
// join still decides where each partition starts (it once came too late
// and a resumed run replayed what the sink already held).
func TestKafka_SeekAfterJoin(t *testing.T) {
	p := streamtest.NewKafka(t)
	p.Publish(t, 20) // keys alternate: 10 records in each partition
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	src, err := Open(ctx, p.URL(""), Options{Group: "seek-after-join"})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	time.Sleep(3 * time.Second) // long enough for kfake to assign both partitions
	if err := src.Seek(ctx, "0=7&1=9"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if _, err := src.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := src.Cursor(); got != "0=10&1=10" {
		t.Errorf("after 4 events from 0=7&1=9: cursor %q, want 0=10&1=10 (a partition started before the cursor)", got)
	}
}

// Open knows every scheme of the catalogue dagfile validates against.
func TestOpen_KnowsEveryScheme(t *testing.T) {
	t.Setenv("PUBSUB_EMULATOR_HOST", "127.0.0.1:1") // never Google's servers
	for _, sch := range Schemes {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := Open(ctx, sch+"://127.0.0.1:1/x?group=g", Options{})
		cancel()
		if err != nil && strings.Contains(err.Error(), "unknown scheme") {
			t.Errorf("%s: %v", sch, err)
		}
		if err == nil {
			s.Close()
		}
	}
}
