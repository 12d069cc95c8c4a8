package stream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/stream/streamtest"
)

// The SQS source against the test SQS server (WEIR_TEST_SQS: fauxqs,
// which speaks aws-sdk-go-v2's JSON protocol). The kill-resume and sink
// cases are in runner/stream_test.go.

func TestSQSURL(t *testing.T) {
	good := []struct {
		raw, account, queue string
		wait                int32
		vis                 time.Duration
	}{
		{"sqs://orders", "", "orders", 20, 30 * time.Second},
		{"sqs://orders.fifo?region=eu-west-1", "", "orders.fifo", 20, 30 * time.Second},
		{"sqs://123456789012/Orders_2?wait=5s&visibility_timeout=2m", "123456789012", "Orders_2", 5, 2 * time.Minute},
		{"sqs://q?endpoint=http://127.0.0.1:1&wait=1s&visibility_timeout=3s", "", "q", 1, 3 * time.Second},
	}
	for _, g := range good {
		u, _ := url.Parse(g.raw)
		q, err := parseSQSURL(u)
		if err != nil || q.account != g.account || q.queue != g.queue || q.wait != g.wait || q.vis != g.vis {
			t.Errorf("%s: %+v, %v; want account %q queue %q wait %d vis %s", g.raw, q, err, g.account, g.queue, g.wait, g.vis)
		}
	}
	bad := map[string]string{
		"sqs://":                             "no queue name",
		"sqs://a/b/c":                        "no queue name",
		"sqs://key:secret@q":                 "credentials do not go in the URL",
		"sqs://q?bogus=1":                    `unknown parameter "bogus"`,
		"sqs://q?wait=0s":                    "wait",
		"sqs://q?wait=21s":                   "wait",
		"sqs://q?wait=1500ms":                "wait",
		"sqs://q?visibility_timeout=1s":      "visibility_timeout",
		"sqs://q?visibility_timeout=13h":     "visibility_timeout",
		"sqs://q?endpoint=127.0.0.1:9324":    "endpoint",
		"sqs://" + strings.Repeat("q", 81):   "at most 80",
		"sqs://q!q":                          "queue name",
		"sqs://orders.fifo.x?region=us-east": "queue name",
	}
	for raw, want := range bad {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		_, err = parseSQSURL(u)
		if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want bad input saying %q", raw, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error shows the secret: %v", raw, err)
		}
	}
}

// sqsQueue makes a queue on the test server and returns its source URL
// and the queue's URL.
func sqsQueue(t *testing.T, name string, attrs map[string]string, params string) (src, qurl string, c *sqs.Client) {
	t.Helper()
	ep := streamtest.SQSEndpoint(t)
	c = streamtest.SQSClient(t, ep)
	name = fmt.Sprintf("weir_t_%d_%s", time.Now().UnixNano()%1e12, name)
	qurl = streamtest.CreateSQSQueue(c, name, attrs)
	t.Cleanup(func() { c.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(qurl)}) })
	return "sqs://" + name + "?region=us-east-1&endpoint=" + ep + params, qurl, c
}

func sqsSend(t *testing.T, c *sqs.Client, qurl string, bodies ...string) {
	t.Helper()
	for _, b := range bodies {
		if _, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(qurl), MessageBody: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
}

// take reads n events from src, each within the batch interval given.
func take(t *testing.T, src Source, n int) []string {
	t.Helper()
	var out []string
	for len(out) < n {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		ev, err := src.Next(ctx)
		cancel()
		if err != nil {
			t.Fatalf("event %d of %d: %v", len(out)+1, n, err)
		}
		out = append(out, string(ev.Raw))
	}
	return out
}

// drainedNow polls src once for a batch interval and reports Drained.
func drainedNow(t *testing.T, src Source) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 1200*time.Millisecond)
	defer cancel()
	if ev, err := src.Next(ctx); err == nil {
		t.Fatalf("unexpected event %s", ev.Raw)
	}
	ok, err := src.(Drainer).Drained(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func openT(t *testing.T, raw string, attempts int) Source {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src, err := Open(ctx, raw, Options{ReconnectAttempts: attempts, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestSQS_DeleteAfterCommit: messages are deleted only when committed;
// what a source handed out but did not commit is visible again as soon
// as it closes; a drained queue says so.
func TestSQS_DeleteAfterCommit(t *testing.T) {
	src, qurl, c := sqsQueue(t, "commit", nil, "")
	var sent []string
	for k := 1; k <= 25; k++ {
		sent = append(sent, fmt.Sprintf(`{"id":%d}`, k))
	}
	sqsSend(t, c, qurl, sent...)
	s1 := openT(t, src, 0)
	got := take(t, s1, 25)
	// Commit what the first 15 Next calls handed out.
	cur := s1.Cursor()
	if cur != "25" {
		t.Fatalf("cursor after 25 events: %q", cur)
	}
	if err := s1.Commit(context.Background(), "15"); err != nil {
		t.Fatal(err)
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openT(t, src, 0)
	defer s2.Close()
	again := take(t, s2, 10)
	if !sameSet(again, got[15:]) {
		t.Errorf("after a commit of 15 of 25 and close: redelivered %v, want the 10 uncommitted %v", again, got[15:])
	}
	if err := s2.Commit(context.Background(), s2.Cursor()); err != nil {
		t.Fatal(err)
	}
	if !drainedNow(t, s2) {
		t.Error("an empty, reachable queue is not drained")
	}
	if !sameSet(append(got[:15:15], again...), sent) {
		t.Errorf("delivered %v, want each of %v", append(got[:15:15], again...), sent)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		if m[x]--; m[x] < 0 {
			return false
		}
	}
	return true
}

// TestSQS_VisibilityExtended: a message held uncommitted for three times
// its visibility timeout is not handed to another consumer (the source
// extends it while the batch is in flight), and once committed it is gone.
func TestSQS_VisibilityExtended(t *testing.T) {
	src, qurl, c := sqsQueue(t, "vis", nil, "&visibility_timeout=3s")
	sqsSend(t, c, qurl, `{"id":1}`)
	s := openT(t, src, 0)
	defer s.Close()
	take(t, s, 1)
	for deadline := time.Now().Add(9 * time.Second); time.Now().Before(deadline); {
		out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(qurl), WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) > 0 {
			t.Fatalf("another consumer received %s while the batch was in flight", aws.ToString(out.Messages[0].Body))
		}
	}
	if err := s.Commit(context.Background(), s.Cursor()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second)
	out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(qurl), WaitTimeSeconds: 1})
	if err != nil || len(out.Messages) > 0 {
		t.Errorf("after the commit: %v, %d messages; want the message deleted", err, len(out.Messages))
	}
}

// TestSQS_FIFOOrder: a FIFO queue's messages come out in each group's
// order, exactly once, through batches committed a few at a time.
func TestSQS_FIFOOrder(t *testing.T) {
	src, qurl, c := sqsQueue(t, "order.fifo", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}, "")
	const n = 30
	for k := 1; k <= n; k++ {
		g := fmt.Sprintf("g%d", k%3)
		if _, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(qurl),
			MessageBody: aws.String(fmt.Sprintf(`{"g":%q,"k":%d}`, g, k)), MessageGroupId: aws.String(g)}); err != nil {
			t.Fatal(err)
		}
	}
	last := map[string]int64{}
	seen := 0
	for round := 0; seen < n && round < 60; round++ {
		s := openT(t, src, 0)
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		var batch []Event
		for len(batch) < 6 {
			ev, err := s.Next(ctx)
			if err != nil {
				break
			}
			batch = append(batch, ev)
		}
		cancel()
		for _, ev := range batch {
			g := ev.Value["g"].(string)
			k, _ := ev.Value["k"].(interface{ Int64() (int64, error) }).Int64()
			if k <= last[g] {
				t.Fatalf("group %s: message %d after %d", g, k, last[g])
			}
			last[g] = k
		}
		// Commit four of the batch; the rest must come back, in order.
		c := min(4, len(batch))
		if err := s.Commit(context.Background(), fmt.Sprint(c)); err != nil {
			t.Fatal(err)
		}
		for _, ev := range batch[c:] {
			k, _ := ev.Value["k"].(interface{ Int64() (int64, error) }).Int64()
			g := ev.Value["g"].(string)
			last[g] = min(last[g], k-1)
		}
		seen += c
		s.Close()
	}
	if seen != n {
		t.Errorf("%d messages committed, want %d", seen, n)
	}
	for g, k := range last {
		if k < n-3 {
			t.Errorf("group %s ends at %d", g, k)
		}
	}
}

// TestSQS_MissingQueue: a queue that does not exist is bad input (exit 2)
// at open, naming the queue.
func TestSQS_MissingQueue(t *testing.T) {
	ep := streamtest.SQSEndpoint(t)
	raw := "sqs://weir_no_such_queue_x?region=us-east-1&endpoint=" + ep
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := Open(ctx, raw, Options{ReconnectAttempts: 1})
	if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "weir_no_such_queue_x") || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("open of a missing queue: %v, want bad input naming it", err)
	}
}

// TestSQS_Down: an endpoint nobody listens on fails the open after
// reconnect_attempts retries, as a failure (exit 1), not bad input.
func TestSQS_Down(t *testing.T) {
	streamtest.SQSEndpoint(t) // dummy credentials
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err = Open(ctx, "sqs://q?region=us-east-1&endpoint=http://"+addr, Options{ReconnectAttempts: 2, Log: t.Logf})
	if err == nil || errors.Is(err, routes.ErrBadInput) || ctx.Err() != nil ||
		!strings.Contains(err.Error(), "unreachable after 2 reconnect attempts") || !strings.Contains(err.Error(), addr) {
		t.Fatalf("open against a down endpoint: %v, want a failure naming it, unreachable after 2 reconnect attempts", err)
	}
	t.Logf("%v after %s", err, time.Since(start).Round(time.Millisecond))
}

// TestSQSFatal: which failed calls are bad input (exit 2) and which are
// retried against reconnect_attempts.
func TestSQSFatal(t *testing.T) {
	s := &sqsSource{name: "sqs://q"}
	tests := []struct {
		err      error
		badInput bool
	}{
		{&smithy.GenericAPIError{Code: "AWS.SimpleQueueService.NonExistentQueue", Fault: smithy.FaultClient}, true},
		{&smithy.GenericAPIError{Code: "AccessDenied", Fault: smithy.FaultClient}, true},
		{&smithy.GenericAPIError{Code: "InvalidClientTokenId", Fault: smithy.FaultClient}, true},
		{&smithy.GenericAPIError{Code: "RequestThrottled", Fault: smithy.FaultClient}, false},
		{&smithy.GenericAPIError{Code: "OverLimit", Fault: smithy.FaultClient}, false},
		{&smithy.GenericAPIError{Code: "InternalError", Fault: smithy.FaultServer}, false},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false},
	}
	for _, tt := range tests {
		err := s.fatal(tt.err)
		if (err != nil) != tt.badInput || (err != nil && !errors.Is(err, routes.ErrBadInput)) {
			t.Errorf("%v: fatal %v, want bad input %v", tt.err, err, tt.badInput)
		}
	}
}
