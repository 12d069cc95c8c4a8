package stream

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/weirhq/weir/routes"
)

// Amazon SQS (sqs://QUEUE or sqs://ACCOUNT_ID/QUEUE, with ?region=,
// ?endpoint= for an SQS-compatible server, ?wait= and
// ?visibility_timeout=). Messages are received by long polling and
// deleted only after the sink committed them; until then their
// visibility timeout is extended every third of it, so a long batch is
// not redelivered under it. A process that dies before deleting gets its
// messages redelivered once their visibility timeout passes: at-least-once,
// effectively-once with merge on a key. A FIFO queue (QUEUE.fifo) hands
// out a message group's next message only after the previous ones were
// deleted, and weir writes a batch in the order received, so a group's
// order is kept. Messages that fail again and again are left to the
// queue's redrive policy (its dead-letter queue): weir never deletes a
// message it has not committed. Credentials come from the SDK's default
// chain (AWS_ACCESS_KEY_ID…, AWS_PROFILE, shared config, roles); weir
// never prints them. The cursor, as for Pub/Sub, only counts the messages
// handed out in this process: SQS cannot seek.

// SQS defaults and bounds.
const (
	sqsMaxWait           = 20 // seconds: SQS's longest long poll
	sqsDefaultVisibility = 30 * time.Second
	sqsMaxVisibility     = 12 * time.Hour
	sqsBatch             = 10 // messages per receive, delete or visibility call (SQS's maximum)
	sqsRetry             = 500 * time.Millisecond
	sqsMaxRetry          = 8 * time.Second
	sqsCallTimeout       = 30 * time.Second
)

var sqsParams = []string{"region", "endpoint", "wait", "visibility_timeout"}

type sqsSource struct {
	client   *sqs.Client
	name     string // the source URL, for messages (it holds no secret)
	queueURL string
	wait     int32 // seconds a receive waits at most
	vis      int32 // seconds a received message stays invisible
	attempts int
	log      func(string, ...any)

	// used by the runner's goroutine only
	misses  int  // calls in a row that did not reach the queue
	emptied bool // the last receive reached the queue and found nothing
	acked   int64

	mu      sync.Mutex
	buf     []types.Message // received, not handed out yet
	pending []types.Message // handed out, not deleted yet

	stopExtend context.CancelFunc
	extended   chan struct{}
}

// sqsQuery reads the URL's parameters.
type sqsQuery struct {
	account, queue, region, endpoint string
	wait                             int32
	vis                              time.Duration
}

func parseSQSURL(u *url.URL) (sqsQuery, error) {
	q := sqsQuery{wait: sqsMaxWait, vis: sqsDefaultVisibility}
	bad := func(format string, args ...any) error {
		return routes.BadInput("stream source %s: %s (use sqs://QUEUE or sqs://ACCOUNT_ID/QUEUE with ?region=…&endpoint=…&wait=20s&visibility_timeout=30s)", routes.Redact(u.String()), fmt.Sprintf(format, args...))
	}
	if u.User != nil {
		return q, bad("credentials do not go in the URL: they come from the AWS environment (AWS_ACCESS_KEY_ID…, AWS_PROFILE)")
	}
	path := strings.Trim(u.Path, "/")
	switch {
	case u.Host != "" && path == "":
		q.queue = u.Host
	case u.Host != "" && !strings.Contains(path, "/"):
		q.account, q.queue = u.Host, path
	default:
		return q, bad("no queue name")
	}
	if len(q.queue) > 80 || strings.ContainsFunc(strings.TrimSuffix(q.queue, ".fifo"), func(r rune) bool {
		return !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		return q, bad("queue name %q: at most 80 letters, digits, - and _ (and .fifo at the end)", q.queue)
	}
	vals := u.Query()
	for k := range vals {
		if !slices.Contains(sqsParams, k) {
			return q, bad("unknown parameter %q (known: %s)", k, strings.Join(sqsParams, ", "))
		}
	}
	q.region, q.endpoint = vals.Get("region"), vals.Get("endpoint")
	if q.endpoint != "" {
		if e, err := url.Parse(q.endpoint); err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
			return q, bad("endpoint %q is not an http(s) URL", q.endpoint)
		}
	}
	if v := vals.Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > sqsMaxWait*time.Second || d%time.Second != 0 {
			return q, bad("wait %q: a whole number of seconds from 1s to 20s", v)
		}
		q.wait = int32(d / time.Second)
	}
	if v := vals.Get("visibility_timeout"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 3*time.Second || d > sqsMaxVisibility || d%time.Second != 0 {
			return q, bad("visibility_timeout %q: a whole number of seconds from 3s to 12h", v)
		}
		q.vis = d
	}
	return q, nil
}

func openSQS(ctx context.Context, u *url.URL, opts Options) (*sqsSource, error) {
	q, err := parseSQSURL(u)
	if err != nil {
		return nil, err
	}
	name := routes.Redact(u.String())
	var load []func(*config.LoadOptions) error
	if q.region != "" {
		load = append(load, config.WithRegion(q.region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, routes.BadInput("stream source %s: AWS configuration: %v", name, err)
	}
	if cfg.Region == "" {
		return nil, routes.BadInput("stream source %s: no AWS region: add ?region= to the URL or set AWS_REGION", name)
	}
	client := sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		if q.endpoint != "" {
			o.BaseEndpoint = aws.String(q.endpoint)
		}
		// weir retries unreachable calls itself, counting them against
		// reconnect_attempts like the other sources.
		o.RetryMaxAttempts = 1
	})
	s := &sqsSource{client: client, name: name, wait: q.wait, vis: int32(q.vis / time.Second),
		attempts: opts.ReconnectAttempts, log: opts.Log}
	if s.attempts <= 0 {
		s.attempts = DefaultReconnectAttempts
	}
	in := &sqs.GetQueueUrlInput{QueueName: aws.String(q.queue)}
	if q.account != "" {
		in.QueueOwnerAWSAccountId = aws.String(q.account)
	}
	for {
		cctx, cancel := context.WithTimeout(ctx, sqsCallTimeout)
		out, err := client.GetQueueUrl(cctx, in)
		cancel()
		if err == nil {
			s.queueURL, s.misses = aws.ToString(out.QueueUrl), 0
			return s, nil
		}
		if err := s.retry(ctx, err); err != nil {
			return nil, err
		}
	}
}

// retry classifies a failed call: a queue that does not exist or a
// request SQS refuses is bad input; anything else counts as a call that
// did not reach the queue and is retried after a backoff, until
// reconnect_attempts of them in a row have failed.
func (s *sqsSource) retry(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if fatal := s.fatal(err); fatal != nil {
		return fatal
	}
	if s.misses++; s.misses > s.attempts {
		return unreachable("sqs", s.name, s.attempts, err)
	}
	wait := Backoff(s.misses, sqsRetry, sqsMaxRetry)
	s.log("sqs %s: %v; retrying in %s", s.name, err, wait)
	return Sleep(ctx, wait)
}

// fatal is the error a retry cannot fix, or nil.
func (s *sqsSource) fatal(err error) error {
	var missing *types.QueueDoesNotExist
	var api smithy.APIError
	switch {
	case errors.As(err, &missing) || errors.As(err, &api) && strings.Contains(api.ErrorCode(), "NonExistentQueue"):
		return routes.BadInput("stream source %s: the queue does not exist (create it, or check the name, ?region= and ?endpoint=)", s.name)
	case errors.As(err, &api) && api.ErrorFault() == smithy.FaultClient && !retryableSQSCode(api.ErrorCode()):
		return routes.BadInput("stream source %s: SQS refused the request: %s: %s", s.name, api.ErrorCode(), api.ErrorMessage())
	}
	return nil
}

// sqsEnds is the queue's backlog, for weir status: the messages waiting
// and those in flight (received, not deleted), as SQS approximates them.
// A cursor means nothing to SQS: there are no ends to move to.
func sqsEnds(ctx context.Context, u *url.URL, opts Options) (Ends, error) {
	opts.ReconnectAttempts = 1
	if opts.Log == nil {
		opts.Log = func(string, ...any) {}
	}
	s, err := openSQS(ctx, u, opts)
	if err != nil {
		return Ends{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, sqsCallTimeout)
	defer cancel()
	out, err := s.client.GetQueueAttributes(cctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(s.queueURL),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		return Ends{}, fmt.Errorf("sqs %s: %w", s.name, err)
	}
	var behind int64
	for _, k := range []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible} {
		n, err := strconv.ParseInt(out.Attributes[string(k)], 10, 64)
		if err != nil {
			return Ends{}, fmt.Errorf("sqs %s: attribute %s: %q", s.name, k, out.Attributes[string(k)])
		}
		behind += n
	}
	return Ends{Behind: behind, Known: true}, nil
}

// retryableSQSCode: client-side codes that pass with time (throttling,
// too many messages in flight), not bad input.
func retryableSQSCode(code string) bool {
	return strings.Contains(code, "Throttl") || strings.Contains(code, "OverLimit") || code == "RequestTimeout"
}

// Seek does nothing: SQS redelivers what was not deleted.
func (s *sqsSource) Seek(context.Context, string) error { return nil }

// Next hands out the next message, receiving up to ten at a time. A
// receive waits at most until ctx's deadline (the batch interval; at
// least one second, SQS's shortest long poll) and is not cancelled
// midway: messages it received would stay invisible for the visibility
// timeout.
func (s *sqsSource) Next(ctx context.Context) (Event, error) {
	for {
		s.mu.Lock()
		if len(s.buf) > 0 {
			m := s.buf[0]
			s.buf = s.buf[1:]
			s.pending = append(s.pending, m)
			s.mu.Unlock()
			s.emptied = false
			return Parse([]byte(aws.ToString(m.Body))), nil
		}
		s.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return Event{}, err
		}
		wait := s.wait
		if dl, ok := ctx.Deadline(); ok {
			wait = min(max(int32(time.Until(dl)/time.Second), 1), s.wait)
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(wait)*time.Second+sqsCallTimeout)
		out, err := s.client.ReceiveMessage(rctx, &sqs.ReceiveMessageInput{
			QueueUrl:            aws.String(s.queueURL),
			MaxNumberOfMessages: sqsBatch,
			WaitTimeSeconds:     wait,
			VisibilityTimeout:   s.vis,
		})
		cancel()
		if err != nil {
			if err := s.retry(ctx, err); err != nil {
				if ctx.Err() != nil {
					return Event{}, ctx.Err()
				}
				return Event{}, err
			}
			continue
		}
		s.misses, s.emptied = 0, len(out.Messages) == 0
		s.mu.Lock()
		s.buf = append(s.buf, out.Messages...)
		s.mu.Unlock()
		if s.stopExtend == nil && len(out.Messages) > 0 {
			s.startExtending()
		}
	}
}

// Drained is true when the last receive reached the queue and found it
// empty: a queue that cannot be reached is not drained. Messages another
// (dead) run still holds invisible come back to a later run.
func (s *sqsSource) Drained(context.Context) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.buf) == 0 && s.misses == 0 && s.emptied, nil
}

// Cursor counts the messages handed out in this process.
func (s *sqsSource) Cursor() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strconv.FormatInt(s.acked+int64(len(s.pending)), 10)
}

// Commit deletes the messages handed out up to cursor (the sink holds
// them).
func (s *sqsSource) Commit(ctx context.Context, cursor string) error {
	n, err := strconv.ParseInt(cursor, 10, 64)
	s.mu.Lock()
	if err != nil || n < s.acked {
		s.mu.Unlock()
		return fmt.Errorf("sqs commit: bad cursor %q", cursor)
	}
	done := slices.Clone(s.pending[:min(int(n-s.acked), len(s.pending))])
	s.mu.Unlock()
	for i := 0; i < len(done); i += sqsBatch {
		var entries []types.DeleteMessageBatchRequestEntry
		for j, m := range done[i:min(i+sqsBatch, len(done))] {
			entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(j)), ReceiptHandle: m.ReceiptHandle})
		}
		for {
			cctx, cancel := context.WithTimeout(ctx, sqsCallTimeout)
			out, err := s.client.DeleteMessageBatch(cctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(s.queueURL), Entries: entries})
			cancel()
			if err == nil {
				if len(out.Failed) > 0 {
					f := out.Failed[0]
					return fmt.Errorf("sqs %s: delete of %d messages failed: %s: %s", s.name, len(out.Failed), aws.ToString(f.Code), aws.ToString(f.Message))
				}
				s.misses = 0
				break
			}
			if err := s.retry(ctx, err); err != nil {
				return fmt.Errorf("sqs %s: delete: %w", s.name, err)
			}
		}
	}
	s.mu.Lock()
	s.pending = s.pending[len(done):]
	s.acked += int64(len(done))
	s.mu.Unlock()
	return nil
}

// startExtending keeps the messages received and not deleted invisible
// while the batch is in flight: every third of the visibility timeout it
// sets their timeout afresh (SQS ends this 12 hours after a message was
// first received).
func (s *sqsSource) startExtending() {
	ctx, cancel := context.WithCancel(context.Background())
	s.stopExtend, s.extended = cancel, make(chan struct{})
	every := time.Duration(s.vis) * time.Second / 3
	go func() {
		defer close(s.extended)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			s.mu.Lock()
			held := slices.Concat(s.pending, s.buf)
			s.mu.Unlock()
			if err := s.setVisibility(ctx, held, s.vis); err != nil && ctx.Err() == nil {
				s.log("sqs %s: extending the visibility of %d messages in flight: %v", s.name, len(held), err)
			}
		}
	}()
}

// setVisibility sets the visibility timeout of msgs to secs.
func (s *sqsSource) setVisibility(ctx context.Context, msgs []types.Message, secs int32) error {
	var errs []error
	for i := 0; i < len(msgs); i += sqsBatch {
		var entries []types.ChangeMessageVisibilityBatchRequestEntry
		for j, m := range msgs[i:min(i+sqsBatch, len(msgs))] {
			entries = append(entries, types.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(strconv.Itoa(j)), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: secs})
		}
		cctx, cancel := context.WithTimeout(ctx, sqsCallTimeout)
		out, err := s.client.ChangeMessageVisibilityBatch(cctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(s.queueURL), Entries: entries})
		cancel()
		switch {
		case err != nil:
			errs = append(errs, err)
		case len(out.Failed) > 0:
			errs = append(errs, fmt.Errorf("%d messages: %s: %s", len(out.Failed), aws.ToString(out.Failed[0].Code), aws.ToString(out.Failed[0].Message)))
		}
	}
	return errors.Join(errs...)
}

// Close makes what was received and not deleted visible again at once,
// so the next run gets it without waiting for its visibility timeout.
func (s *sqsSource) Close() error {
	if s.stopExtend != nil {
		s.stopExtend()
		<-s.extended
	}
	s.mu.Lock()
	held := slices.Concat(s.pending, s.buf)
	s.pending, s.buf = nil, nil
	s.mu.Unlock()
	if len(held) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.setVisibility(ctx, held, 0); err != nil {
			s.log("sqs %s: %d messages not deleted come back after their visibility timeout: %v", s.name, len(held), err)
		}
	}
	return nil
}
