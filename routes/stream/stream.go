package stream

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/scheme"
)

// Event is one message of a stream: its payload as received and, when the
// payload is a JSON object, its parsed fields.
type Event struct {
	Raw   []byte         // the payload as received
	Value map[string]any // the parsed JSON object; nil when Err is set
	Err   error          // why the payload is not a JSON object (the event is quarantined)
}

// Source is an event source. Next, Cursor and Commit are called from one
// goroutine; Close may be called from another to stop a blocked Next.
//
// The runner's loop is: Seek to the cursor its sink committed last, call
// Next until a batch is full, write the batch and commit it in the sink
// with Cursor(), and only then call Commit(Cursor()) so that a source that
// acknowledges (Kafka offsets, SQS delete, Pub/Sub ack) never forgets an
// event the sink does not hold yet.
type Source interface {
	// Seek places the source just after cursor (a value Cursor returned
	// before, possibly in another process); "" is the source's start. It
	// is called once, before the first Next. Sources that cannot seek
	// (SQS, Pub/Sub) redeliver what was not committed instead.
	Seek(ctx context.Context, cursor string) error
	// Next blocks until the next event arrives and returns it; when ctx
	// ends first it returns ctx.Err() and the source stays usable.
	Next(ctx context.Context) (Event, error)
	// Cursor is the position just after the last event Next returned,
	// text-encoded (see each source for its form).
	Cursor() string
	// Commit acknowledges every event up to cursor to the source. It is
	// called only after the destination committed the cursor.
	Commit(ctx context.Context, cursor string) error
	Close() error
}

// Replayer is a source whose Seek delivers again, in the order of their
// first delivery (per partition for Kafka), the events it delivered
// before: SSE (Last-Event-ID), WebSocket with a cursor field, Kafka. A
// runner uses it to tell an event it already handled (quarantined) before
// a crash from a new one. SQS and Pub/Sub redeliver in any order and are
// not Replayers.
type Replayer interface {
	// Replayed is asked after each Next, in order, about cursor (a value
	// Cursor returned in an earlier run, at or after the one Seek was
	// given): replayed reports whether the event Next returned last lies
	// at or before cursor, done whether every event up to cursor has now
	// been delivered again.
	Replayed(cursor string) (replayed, done bool)
}

// Drainer is a source that knows when it has delivered everything there
// is now (Kafka: every partition read to its end offset). Without it, an
// available_now run ends at the first batch_interval without an event.
type Drainer interface {
	Drained(ctx context.Context) (bool, error)
}

// Options are the parts of a stream task a source needs.
type Options struct {
	// CursorField is the event field that orders a WebSocket feed (an id
	// or a sequence number); "" when the feed has none.
	CursorField string
	// Group is the Kafka consumer group when the URL names none (the task name).
	Group string
	// Log receives reconnect warnings; nil discards them.
	Log func(format string, args ...any)
	// ReconnectAttempts is how many reconnects in a row a feed (SSE,
	// WebSocket) may fail to reach its server before Next returns an
	// error; 0 is DefaultReconnectAttempts.
	ReconnectAttempts int
}

// DefaultReconnectAttempts is the reconnects in a row that may fail to
// reach an SSE or WebSocket server (about 30 s of backoff from 500 ms)
// before the task fails: an available_now run whose source is down
// exits 1, for the scheduler to retry, instead of reporting a drained
// source.
const DefaultReconnectAttempts = 6

// link is what a feed's reader goroutine (SSE, WebSocket) tells the
// runner's goroutine: whether the server is reachable and how many
// messages it skipped as replays.
type link struct {
	attempts  int         // reconnects that may fail in a row
	connected atomic.Bool // a connection is open
	failing   atomic.Bool // the last connect did not reach the server
	connects  atomic.Int64
	skipped   atomic.Int64
	// used by the runner's goroutine only (Next, Drained)
	lastConnects, lastSkipped int64
	delivered, warned         bool
}

func newLink(opts Options) link {
	return link{attempts: cmp.Or(opts.ReconnectAttempts, DefaultReconnectAttempts)}
}

// up records a connect that reached the server (reader goroutine).
func (l *link) up() {
	l.failing.Store(false)
	l.connects.Add(1)
	l.connected.Store(true)
}

// down records the end of a connect attempt (reader goroutine) and
// reports whether it had reached the server.
func (l *link) down() bool {
	reached := l.connected.Swap(false)
	if !reached {
		l.failing.Store(true)
	}
	return reached
}

// sent records an event handed out by Next.
func (l *link) sent() {
	l.delivered = true
	l.lastConnects = l.connects.Load()
}

// drained reports a feed drained when no replay arrived since the last
// call and the server is reachable: connected now, or connected again
// since the last event or call (a server that closes each connection
// once it has nothing more). Silence while the server cannot be reached,
// or after a drop before the next connect, or while it replays what the
// cursor already holds, is not the end of the feed.
func (l *link) drained() bool {
	n, c := l.skipped.Load(), l.connects.Load()
	again := c != l.lastConnects
	l.lastConnects = c
	if n != l.lastSkipped {
		l.lastSkipped = n
		return false
	}
	return !l.failing.Load() && (l.connected.Load() || again)
}

// unreachable is the error a reader hands Next after the server could
// not be reached attempts+1 times in a row.
func unreachable(kind, rawURL string, attempts int, err error) error {
	return fmt.Errorf("%s %s: unreachable after %d reconnect attempts (reconnect_attempts): %w", kind, routes.Redact(rawURL), attempts, err)
}

// Schemes are the URL schemes Open knows (the catalogue dagfile checks
// stream sources against).
var Schemes = scheme.Streams

func init() { routes.RegisterStreamSchemes(Schemes...) }

// Open opens the source a URL names. A malformed URL is bad input.
func Open(ctx context.Context, raw string, opts Options) (Source, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, routes.BadInput("stream source %s: %v", routes.Redact(raw), err)
	}
	if opts.Log == nil {
		opts.Log = func(string, ...any) {}
	}
	switch u.Scheme {
	case "sse", "sse+http", "sse+https":
		return openSSE(u, opts)
	case "ws", "wss":
		return openWS(u, opts)
	case "kafka":
		return openKafka(ctx, u, opts)
	case "pubsub":
		return openPubSub(ctx, u, opts)
	case "sqs":
		return openSQS(ctx, u, opts)
	}
	return nil, routes.BadInput("stream source %s: unknown scheme %q (known: %v)", routes.Redact(raw), u.Scheme, Schemes)
}

// Parse turns a payload into an Event: a JSON object, or an Err.
func Parse(raw []byte) Event {
	ev := Event{Raw: raw}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // integers keep their 64 bits
	if err := dec.Decode(&ev.Value); err != nil {
		ev.Value, ev.Err = nil, fmt.Errorf("not a JSON object: %w", err)
	} else if ev.Value == nil {
		ev.Err = errors.New("not a JSON object: null")
	} else if dec.More() {
		ev.Value, ev.Err = nil, errors.New("not a JSON object: text after the object")
	}
	return ev
}

// Backoff is the wait before the n-th reconnect (n from 1): doubling from
// base, at most max.
func Backoff(n int, base, max time.Duration) time.Duration {
	d := base
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}

// sleep waits d or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Ends are a source's earliest and latest cursors and how many events a
// cursor is behind the latest, for a source that can tell (Kafka: the log
// start and high-water mark of each partition); Known is false for the
// others.
type Ends struct {
	Earliest, Latest string
	Behind           int64
	Known            bool
}

// SourceEnds asks the source a URL names for its ends and cursor's lag,
// without consuming (a Kafka source joins no group). A source that cannot
// tell returns Known false.
func SourceEnds(ctx context.Context, raw string, opts Options, cursor string) (Ends, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Ends{}, routes.BadInput("stream source %s: %v", routes.Redact(raw), err)
	}
	switch u.Scheme {
	case "kafka":
		return kafkaEnds(ctx, u, opts, cursor)
	case "sqs":
		return sqsEnds(ctx, u, opts)
	}
	return Ends{}, nil
}

// CheckCursor refuses a cursor the source a URL names cannot seek to.
func CheckCursor(raw, cursor string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return routes.BadInput("stream source %s: %v", routes.Redact(raw), err)
	}
	switch u.Scheme {
	case "kafka":
		if _, err := decodeKafkaCursor(cursor); err != nil {
			return routes.BadInput("%v", err)
		}
	case "pubsub", "sqs":
		return routes.BadInput("a %s:// source has no position to move to: it redelivers what was not acknowledged", u.Scheme)
	}
	return nil
}

// CheckURL checks the shape of a stream source URL without connecting
// (weir lint): today the sqs:// parameters and queue name; other schemes
// are checked when they open.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return routes.BadInput("stream source %s: %v", routes.Redact(raw), err)
	}
	if u.Scheme == "sqs" {
		_, err = parseSQSURL(u)
	}
	return err
}
