package stream

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/weirhq/weir/routes"
)

// WebSocket feeds (ws://, wss://). Each text or binary message is one
// event. The URL's subscribe= parameter (removed before dialing) is a
// message sent after every connect; {cursor} in it is replaced by the
// cursor to resume after. The cursor is the value of the field the task
// names (cursor:); events at or below the resume cursor are skipped, so a
// feed that replays from an older point does not duplicate. Without a
// cursor field there is nothing to resume from: delivery is at-least-once
// within one connection only.

// wsReadLimit bounds one message.
const wsReadLimit = 16 << 20

// WebSocket reconnect delays.
const (
	wsRetry    = 100 * time.Millisecond
	wsMaxRetry = 30 * time.Second
)

type wsSource struct {
	url       string
	subscribe string
	opts      Options
	after     string // skip events whose cursor is at or below this one
	cursor    string // the cursor of the last event Next returned
	last      string // the cursor field of the last event Next returned ("" without one)
	ch        chan wsItem
	stop      context.CancelFunc
	done      chan struct{}
	link
}

type wsItem struct {
	ev  Event
	cur string
	err error
}

func openWS(u *url.URL, opts Options) (*wsSource, error) {
	q := u.Query()
	sub := q.Get("subscribe")
	q.Del("subscribe")
	d := *u
	d.RawQuery = q.Encode()
	if d.Host == "" {
		return nil, routes.BadInput("stream source %s: no host", routes.Redact(u.String()))
	}
	return &wsSource{url: d.String(), subscribe: sub, opts: opts, link: newLink(opts)}, nil
}

func (s *wsSource) Seek(_ context.Context, cursor string) error {
	s.after, s.cursor = cursor, cursor
	return nil
}

func (s *wsSource) Next(ctx context.Context) (Event, error) {
	if s.ch == nil {
		s.start()
	}
	select {
	case it := <-s.ch:
		if it.err != nil {
			return Event{}, it.err
		}
		if it.cur != "" {
			s.cursor = it.cur
		}
		s.last = it.cur
		s.sent()
		return it.ev, nil
	case <-ctx.Done():
		return Event{}, ctx.Err()
	}
}

func (s *wsSource) Cursor() string { return s.cursor }

// Replayed compares the last event's cursor field with cursor
// (CompareCursors). Without a cursor field nothing can be told: every
// event is new.
func (s *wsSource) Replayed(cursor string) (replayed, done bool) {
	if s.opts.CursorField == "" || cursor == "" {
		return false, true
	}
	done = s.cursor != "" && CompareCursors(s.cursor, cursor) >= 0
	if s.last == "" { // an event without the field: replayed until the cursor was reached
		return !done, done
	}
	return CompareCursors(s.last, cursor) <= 0, done
}

// Drained is true while the server is reachable and sends nothing new,
// not even replays: a feed that replays what the cursor holds keeps an
// available_now run reading. A feed that only replayed is drained with a
// warning naming the cursor.
func (s *wsSource) Drained(context.Context) (bool, error) {
	if !s.drained() {
		return false, nil
	}
	if n := s.skipped.Load(); n > 0 && !s.delivered && !s.warned {
		s.warned = true
		s.opts.Log("ws %s: the feed sent %d events, all at or below the cursor %q, and nothing after it: it replays from an older point than subscribe asks, or has nothing new", routes.Redact(s.url), n, s.cursor)
	}
	return true, nil
}

// Commit is a no-op: the feed keeps no consumer state.
func (s *wsSource) Commit(context.Context, string) error { return nil }

func (s *wsSource) Close() error {
	if s.stop != nil {
		s.stop()
		<-s.done
	}
	return nil
}

func (s *wsSource) start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.ch, s.stop, s.done = make(chan wsItem, 1024), cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		s.read(ctx)
	}()
}

// read connects and reconnects with a backoff until Close. After
// attempts reconnects in a row that do not reach the server, it hands
// Next an error.
func (s *wsSource) read(ctx context.Context) {
	fails, misses := 0, 0
	for ctx.Err() == nil {
		n, err := s.connect(ctx)
		reached := s.down()
		if n > 0 {
			fails = 0
		}
		var fatal *wsFatalError
		if !errors.As(err, &fatal) && ctx.Err() == nil {
			if reached {
				misses = 0
			} else if misses++; misses > s.attempts {
				err = &wsFatalError{unreachable("ws", s.url, s.attempts, err).Error()}
			}
		}
		if errors.As(err, &fatal) {
			select {
			case s.ch <- wsItem{err: err}:
			case <-ctx.Done():
			}
			return
		}
		fails++
		wait := Backoff(fails, wsRetry, wsMaxRetry)
		if ctx.Err() == nil {
			s.opts.Log("ws %s: %v; reconnecting in %s after cursor %q", routes.Redact(s.url), err, wait, s.after)
		}
		if Sleep(ctx, wait) != nil {
			return
		}
	}
}

// wsFatalError is a failure that reconnecting cannot fix.
type wsFatalError struct{ msg string }

func (e *wsFatalError) Error() string { return e.msg }

// connect dials, subscribes and reads until the connection drops.
func (s *wsSource) connect(ctx context.Context) (int, error) {
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	c, _, err := websocket.Dial(dctx, s.url, nil)
	cancel()
	if err != nil {
		return 0, err
	}
	defer c.CloseNow()
	c.SetReadLimit(wsReadLimit)
	if s.subscribe != "" {
		msg := strings.ReplaceAll(s.subscribe, "{cursor}", s.after)
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			return 0, fmt.Errorf("subscribe: %w", err)
		}
	}
	s.up()
	n := 0
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) == websocket.StatusPolicyViolation {
				return n, &wsFatalError{fmt.Sprintf("ws %s: the server refuses the feed: %v", routes.Redact(s.url), err)}
			}
			return n, err
		}
		it, keep := s.item(data)
		if !keep {
			s.skipped.Add(1) // a replay: progress, not silence
			continue
		}
		select {
		case s.ch <- it:
			n++
		case <-ctx.Done():
			return n, ctx.Err()
		}
	}
}

// item parses a message and reads its cursor; keep is false for an event
// at or below the resume cursor.
func (s *wsSource) item(data []byte) (wsItem, bool) {
	it := wsItem{ev: Parse(data)}
	if s.opts.CursorField == "" || it.ev.Err != nil {
		return it, true
	}
	v, ok := it.ev.Value[s.opts.CursorField]
	if !ok || v == nil {
		return it, true
	}
	it.cur = fmt.Sprint(v)
	if s.after != "" && CompareCursors(it.cur, s.after) <= 0 {
		return it, false
	}
	s.after = it.cur
	return it, true
}

// CompareCursors orders two cursor values: numerically when both are
// integers, else as text.
func CompareCursors(a, b string) int {
	x, okA := new(big.Int).SetString(a, 10)
	y, okB := new(big.Int).SetString(b, 10)
	if okA && okB {
		return x.Cmp(y)
	}
	return strings.Compare(a, b)
}
