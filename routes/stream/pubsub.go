package stream

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/pubsub/v2"

	"github.com/weirhq/weir/routes"
)

// Google Cloud Pub/Sub (pubsub://project/subscription). Messages are
// acknowledged only after the sink committed them; until then the client
// keeps extending their ack deadline (up to pubsubMaxExtension), so a long
// batch is not redelivered under it. A process that dies before acking
// gets its messages redelivered: at-least-once, effectively-once with
// merge on a key. Pub/Sub cannot seek to a sink's cursor: the cursor is
// only a count of messages delivered in this process. The client honours
// PUBSUB_EMULATOR_HOST (and the usual Google credentials otherwise).

// pubsubMaxExtension bounds how long an unacked message is kept leased.
const pubsubMaxExtension = 30 * time.Minute

type pubsubSource struct {
	client  *pubsub.Client
	sub     *pubsub.Subscriber
	name    string
	ch      chan *pubsub.Message
	errc    chan error
	pending []*pubsub.Message // delivered by Next, not acked yet
	acked   int64             // messages acked so far
	stop    context.CancelFunc
	done    chan struct{}
}

func openPubSub(ctx context.Context, u *url.URL, _ Options) (*pubsubSource, error) {
	project, subName := u.Host, strings.Trim(u.Path, "/")
	if project == "" || subName == "" || strings.Contains(subName, "/") {
		return nil, routes.BadInput("stream source %s: use pubsub://PROJECT/SUBSCRIPTION", routes.Redact(u.String()))
	}
	client, err := pubsub.NewClient(ctx, project)
	if err != nil {
		return nil, fmt.Errorf("pubsub %s: %w", routes.Redact(u.String()), err)
	}
	sub := client.Subscriber(subName)
	sub.ReceiveSettings.MaxOutstandingMessages = -1 // the batch bounds what is held
	sub.ReceiveSettings.MaxOutstandingBytes = -1
	sub.ReceiveSettings.MaxExtension = pubsubMaxExtension
	// Messages pulled but not handed to Next are nacked on Close, so the
	// next run gets them at once instead of after their ack deadline.
	sub.ReceiveSettings.ShutdownOptions = &pubsub.ShutdownOptions{Behavior: pubsub.ShutdownBehaviorNackImmediately, Timeout: 10 * time.Second}
	return &pubsubSource{client: client, sub: sub, name: u.String(),
		ch: make(chan *pubsub.Message), errc: make(chan error, 1)}, nil
}

// Seek does nothing: Pub/Sub redelivers what was not acked.
func (s *pubsubSource) Seek(context.Context, string) error { return nil }

func (s *pubsubSource) Next(ctx context.Context) (Event, error) {
	if s.stop == nil {
		s.start()
	}
	select {
	case m := <-s.ch:
		s.pending = append(s.pending, m)
		return Parse(m.Data), nil
	case err := <-s.errc:
		return Event{}, fmt.Errorf("pubsub %s: %w", routes.Redact(s.name), err)
	case <-ctx.Done():
		return Event{}, ctx.Err()
	}
}

// start runs Receive until Close; each message waits in its callback until
// Next takes it (or Close nacks it).
func (s *pubsubSource) start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.stop, s.done = cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		err := s.sub.Receive(ctx, func(ctx context.Context, m *pubsub.Message) {
			select {
			case s.ch <- m:
			case <-ctx.Done():
				m.Nack()
			}
		})
		if err != nil && ctx.Err() == nil {
			s.errc <- err
		}
	}()
}

// Cursor counts the messages delivered in this process.
func (s *pubsubSource) Cursor() string {
	return strconv.FormatInt(s.acked+int64(len(s.pending)), 10)
}

// Commit acks the messages delivered up to cursor.
func (s *pubsubSource) Commit(_ context.Context, cursor string) error {
	n, err := strconv.ParseInt(cursor, 10, 64)
	if err != nil || n < s.acked {
		return fmt.Errorf("pubsub commit: bad cursor %q", cursor)
	}
	k := min(int(n-s.acked), len(s.pending))
	for _, m := range s.pending[:k] {
		m.Ack()
	}
	s.pending = s.pending[k:]
	s.acked += int64(k)
	return nil
}

// Close nacks what was not committed (redelivered at once) and stops.
func (s *pubsubSource) Close() error {
	for _, m := range s.pending {
		m.Nack()
	}
	s.pending = nil
	if s.stop != nil {
		s.stop()
		<-s.done
	}
	return s.client.Close()
}
