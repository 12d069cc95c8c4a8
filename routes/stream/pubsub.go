package stream

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
//
// The streaming pull retries an unreachable service for ever without a
// word, so the source asks for its subscription when it opens and
// whenever a batch interval passed without a message (Drained): a
// subscription that does not exist is bad input; a service that cannot be
// reached counts against reconnect_attempts, and one more failure in a row
// fails the run, instead of an available_now run reporting a drained
// subscription.

// pubsubMaxExtension bounds how long an unacked message is kept leased.
const pubsubMaxExtension = 30 * time.Minute

// pubsubProbeTimeout bounds one check that the subscription is reachable.
const pubsubProbeTimeout = 10 * time.Second

type pubsubSource struct {
	client   *pubsub.Client
	sub      *pubsub.Subscriber
	name     string
	path     string // projects/P/subscriptions/S
	attempts int
	misses   int // checks in a row that did not reach the service
	log      func(string, ...any)
	ch       chan *pubsub.Message
	errc     chan error
	pending  []*pubsub.Message // delivered by Next, not acked yet
	acked    int64             // messages acked so far
	stop     context.CancelFunc
	done     chan struct{}
}

func openPubSub(ctx context.Context, u *url.URL, opts Options) (*pubsubSource, error) {
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
	s := &pubsubSource{client: client, sub: sub, name: u.String(),
		path:     "projects/" + project + "/subscriptions/" + subName,
		attempts: opts.ReconnectAttempts, log: opts.Log,
		ch: make(chan *pubsub.Message), errc: make(chan error, 1)}
	if s.attempts <= 0 {
		s.attempts = DefaultReconnectAttempts
	}
	if s.log == nil {
		s.log = func(string, ...any) {}
	}
	for {
		ok, err := s.reachable(ctx)
		if err != nil {
			client.Close()
			return nil, err
		}
		if ok {
			return s, nil
		}
	}
}

// reachable asks for the subscription once: true when the service
// answered; false, after a backoff, when it could not be reached and
// attempts remain; an error when the subscription does not exist or the
// attempts are spent.
func (s *pubsubSource) reachable(ctx context.Context) (bool, error) {
	cctx, cancel := context.WithTimeout(ctx, pubsubProbeTimeout)
	_, err := s.client.SubscriptionAdminClient.GetSubscription(cctx, &pubsubpb.GetSubscriptionRequest{Subscription: s.path},
		gax.WithRetry(func() gax.Retryer { return nil }))
	cancel()
	switch status.Code(err) {
	case codes.OK:
		s.misses = 0
		return true, nil
	case codes.NotFound:
		return false, routes.BadInput("stream source %s: the subscription does not exist (create it, or check the project and name)", routes.Redact(s.name))
	case codes.PermissionDenied, codes.Unauthenticated, codes.InvalidArgument:
		return false, routes.BadInput("stream source %s: %v", routes.Redact(s.name), err)
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if s.misses++; s.misses > s.attempts {
		return false, unreachable("pubsub", s.name, s.attempts, err)
	}
	wait := Backoff(s.misses, 500*time.Millisecond, 8*time.Second)
	s.log("pubsub %s: %v; retrying in %s", routes.Redact(s.name), err, wait)
	return false, Sleep(ctx, wait)
}

// Drained is true when a batch interval passed without a message and the
// subscription is reachable: a service that is down is not drained.
func (s *pubsubSource) Drained(ctx context.Context) (bool, error) {
	ok, err := s.reachable(ctx)
	if err != nil {
		return false, err
	}
	return ok, nil
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
