package stream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/weirhq/weir/routes"
)

// Server-Sent Events (sse://host/path is http, sse+https:// is https). The
// cursor is the id of the last event read (Last-Event-ID): the source
// sends it when it reconnects, and so does a restarted task, from the id
// its sink committed. A server that ignores Last-Event-ID replays from its
// own start; merge on a key absorbs that.

// SSE reconnect delays: the first wait (until the server sends retry:) and
// the longest.
const (
	sseRetry    = 500 * time.Millisecond
	sseMaxRetry = 30 * time.Second
)

// sseSource reads one SSE feed through a goroutine that reconnects.
type sseSource struct {
	url    string
	opts   Options
	client *http.Client
	lastID string          // the id the next connection resumes after
	cursor string          // the id of the last event Next returned
	passed map[string]bool // Replayed: cursors an event since Seek was at
	ch     chan sseItem
	stop   context.CancelFunc
	done   chan struct{}
	link
}

// sseItem is an event or a fatal error, from the reader goroutine.
type sseItem struct {
	id   string
	data []byte
	err  error
}

func openSSE(u *url.URL, opts Options) (*sseSource, error) {
	h := *u
	h.Scheme = "http"
	if u.Scheme == "sse+https" {
		h.Scheme = "https"
	}
	if h.Host == "" {
		return nil, routes.BadInput("stream source %s: no host", routes.Redact(u.String()))
	}
	return &sseSource{url: h.String(), opts: opts, client: &http.Client{}, link: newLink(opts)}, nil
}

func (s *sseSource) Seek(_ context.Context, cursor string) error {
	s.lastID, s.cursor = cursor, cursor
	return nil
}

func (s *sseSource) Next(ctx context.Context) (Event, error) {
	if s.ch == nil {
		s.start()
	}
	select {
	case it := <-s.ch:
		if it.err != nil {
			return Event{}, it.err
		}
		if it.id != "" {
			s.cursor = it.id
		}
		s.sent()
		return Parse(it.data), nil
	case <-ctx.Done():
		return Event{}, ctx.Err()
	}
}

func (s *sseSource) Cursor() string { return s.cursor }

// Replayed: SSE ids are opaque, but a server that honours Last-Event-ID
// replays in its order, so the events up to the one whose id is cursor
// are replayed, and the ones after it are new.
func (s *sseSource) Replayed(cursor string) (replayed, done bool) {
	if s.passed[cursor] {
		return false, true
	}
	if s.cursor == cursor {
		if s.passed == nil {
			s.passed = map[string]bool{}
		}
		s.passed[cursor] = true
		return true, true
	}
	return true, false
}

// Drained is true while the server is reachable (link.drained): an
// available_now run does not end while its source is down.
func (s *sseSource) Drained(context.Context) (bool, error) { return s.drained(), nil }

// Commit is a no-op: an SSE server keeps no consumer state.
func (s *sseSource) Commit(context.Context, string) error { return nil }

func (s *sseSource) Close() error {
	if s.stop != nil {
		s.stop()
		<-s.done
	}
	return nil
}

// start runs the reader goroutine until Close.
func (s *sseSource) start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.ch, s.stop, s.done = make(chan sseItem, 1024), cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		s.read(ctx)
	}()
}

// read connects, reads until the connection drops, and reconnects after a
// backoff (reset by every event, based on the server's retry:). After
// attempts reconnects in a row that do not reach the server, it hands
// Next an error.
func (s *sseSource) read(ctx context.Context) {
	base, fails, misses := sseRetry, 0, 0
	for ctx.Err() == nil {
		n, err := s.connect(ctx, &base)
		reached := s.down()
		if n > 0 {
			fails = 0
		}
		var fatal *sseFatalError
		if !errors.As(err, &fatal) && ctx.Err() == nil {
			if reached {
				misses = 0
			} else if misses++; misses > s.attempts {
				err = &sseFatalError{unreachable("sse", s.url, s.attempts, err).Error()}
			}
		}
		if errors.As(err, &fatal) {
			select {
			case s.ch <- sseItem{err: err}:
			case <-ctx.Done():
			}
			return
		}
		fails++
		wait := Backoff(fails, base, sseMaxRetry)
		if ctx.Err() == nil {
			s.opts.Log("sse %s: %v; reconnecting in %s after id %q", routes.Redact(s.url), err, wait, s.lastID)
		}
		if Sleep(ctx, wait) != nil {
			return
		}
	}
}

// sseFatalError is a response that reconnecting cannot fix.
type sseFatalError struct{ msg string }

func (e *sseFatalError) Error() string { return e.msg }

// connect reads one connection and returns the events it delivered.
func (s *sseSource) connect(ctx context.Context, base *time.Duration) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return 0, &sseFatalError{fmt.Sprintf("sse %s: %v", routes.Redact(s.url), err)}
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	if s.lastID != "" {
		req.Header.Set("Last-Event-ID", s.lastID)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
		s.up()
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return 0, fmt.Errorf("status %s", resp.Status)
	default: // 204 (the server says stop) and other 4xx
		return 0, &sseFatalError{fmt.Sprintf("sse %s: status %s: the server refuses the feed", routes.Redact(s.url), resp.Status)}
	}
	return s.scan(ctx, bufio.NewReader(resp.Body), base)
}

// scan parses the event stream (the WHATWG rules: data lines joined by
// newlines, id kept across events, retry in milliseconds, comments
// skipped) and hands each event to Next.
func (s *sseSource) scan(ctx context.Context, r *bufio.Reader, base *time.Duration) (int, error) {
	var data []byte
	var hasData bool
	n := 0
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the server closed the stream")
			}
			return n, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if hasData {
				select {
				case s.ch <- sseItem{id: s.lastID, data: data}:
					n++
				case <-ctx.Done():
					return n, ctx.Err()
				}
			}
			data, hasData = nil, false
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data, hasData = append(data, value...), true
		case "id":
			if !strings.ContainsRune(value, 0) {
				s.lastID = value
			}
		case "retry":
			if ms, err := strconv.Atoi(value); err == nil && ms >= 0 {
				*base = time.Duration(ms) * time.Millisecond
			}
		}
	}
}
