// Package streamtest holds real protocol peers for stream tests, run in
// the test process (a killed child process connects to them like any
// client): an SSE server, a WebSocket feed (coder/websocket), a kfake
// Kafka cluster, a pstest Pub/Sub server and queues on the test SQS server
// (WEIR_TEST_SQS), all serving one feed shape.
package streamtest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/coder/websocket"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// feed is an ordered list of payloads a peer serves: item k (from 1) is
// {"id":k,"seq":k,"v":"e<k>"}, except the bad ones.
type feed struct {
	mu    sync.Mutex
	items []string
	added chan struct{} // closed and replaced on every add
}

// Payloads that must be quarantined: not JSON, and an id that breaks the contract.
func BadPayload(k int) (string, bool) {
	switch k % 25 {
	case 5:
		return fmt.Sprintf("not json %d", k), true
	case 12:
		return fmt.Sprintf(`{"id":"bad-%d","seq":%d,"v":"x"}`, k, k), true
	}
	return "", false
}

func Payload(k int) string {
	if p, bad := BadPayload(k); bad {
		return p
	}
	return fmt.Sprintf(`{"id":%d,"seq":%d,"v":"e%d"}`, k, k, k)
}

// GoodIDs are the ids of the good items among 1..n.
func GoodIDs(n int) []int64 {
	var ids []int64
	for k := 1; k <= n; k++ {
		if _, bad := BadPayload(k); !bad {
			ids = append(ids, int64(k))
		}
	}
	return ids
}

// BadCount is the number of bad items among 1..n.
func BadCount(n int) int { return n - len(GoodIDs(n)) }

func newFeed() *feed { return &feed{added: make(chan struct{})} }

// add appends items up to n.
func (f *feed) add(n int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k := len(f.items) + 1; k <= n; k++ {
		f.items = append(f.items, Payload(k))
		out = append(out, Payload(k))
	}
	close(f.added)
	f.added = make(chan struct{})
	return out
}

// after returns the items after index k and a channel closed on the next add.
func (f *feed) after(k int) ([]string, chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if k > len(f.items) {
		k = len(f.items)
	}
	return f.items[k:], f.added
}

// Peer is a stream source under test.
type Peer interface {
	// URL is the source URL for a task (Pub/Sub: a subscription of its own,
	// created now: call it before Publish).
	URL(task string) string
	// Publish makes the feed hold items 1..n.
	Publish(t testing.TB, n int)
}

// sseFeed serves the feed as Server-Sent Events with ids, honours
// Last-Event-ID, says retry: 50 and drops every connection after 7 events.
type sseFeed struct {
	*feed
	srv *httptest.Server
}

// NewSSE starts an SSE server: events carry ids, Last-Event-ID is
// honoured, retry: is 50 ms and every connection drops after 7 events.
func NewSSE(t testing.TB) Peer {
	p := &sseFeed{feed: newFeed()}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *sseFeed) URL(string) string {
	return "sse://" + strings.TrimPrefix(p.srv.URL, "http://") + "/events"
}
func (p *sseFeed) Publish(_ testing.TB, n int) { p.add(n) }

func (p *sseFeed) serve(w http.ResponseWriter, r *http.Request) {
	last, _ := strconv.Atoi(r.Header.Get("Last-Event-ID"))
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, ": weir test feed\nretry: 50\n\n")
	sent := 0
	for {
		items, added := p.after(last)
		for _, it := range items {
			last++
			fmt.Fprintf(w, "id: %d\ndata: %s\n\n", last, it)
			if sent++; sent == 7 {
				return // a mid-stream drop: the client reconnects with Last-Event-ID
			}
		}
		w.(http.Flusher).Flush()
		select {
		case <-added:
		case <-r.Context().Done():
			return
		}
	}
}

// wsFeed serves the feed over WebSocket: the client subscribes with
// {"after":"<seq>"}; every connection is dropped after 9 events.
type wsFeed struct {
	*feed
	srv *httptest.Server
}

// NewWS starts a WebSocket feed (coder/websocket): subscribe with
// {"after":"<seq>"}; every connection drops after 9 events.
func NewWS(t testing.TB) Peer {
	p := &wsFeed{feed: newFeed()}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *wsFeed) URL(string) string {
	return "ws://" + strings.TrimPrefix(p.srv.URL, "http://") + `/feed?subscribe=%7B%22after%22%3A%22{cursor}%22%7D`
}
func (p *wsFeed) Publish(_ testing.TB, n int) { p.add(n) }

func (p *wsFeed) serve(w http.ResponseWriter, r *http.Request) {
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
	var after int
	fmt.Sscanf(strings.TrimPrefix(string(msg), `{"after":"`), "%d", &after)
	sent := 0
	for {
		items, added := p.after(after)
		for _, it := range items {
			after++
			if c.Write(ctx, websocket.MessageText, []byte(it)) != nil {
				return
			}
			if sent++; sent == 9 {
				c.Close(websocket.StatusGoingAway, "test drop")
				return
			}
		}
		select {
		case <-added:
		case <-ctx.Done():
			return
		}
	}
}

// kafkaPeer is a kfake cluster with a two-partition topic per test.
type kafkaPeer struct {
	c     *kfake.Cluster
	topic string
	cl    *kgo.Client
	n     int
}

// NewKafka starts a kfake cluster with a two-partition topic.
func NewKafka(t testing.TB) Peer {
	topic := fmt.Sprintf("events_%d", time.Now().UnixNano())
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &kafkaPeer{c: c, topic: topic, cl: cl}
}

func (p *kafkaPeer) URL(string) string {
	return "kafka://" + p.c.ListenAddrs()[0] + "/" + p.topic
}

func (p *kafkaPeer) Publish(t testing.TB, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for k := p.n + 1; k <= n; k++ {
		r := &kgo.Record{Key: []byte(strconv.Itoa(k % 2)), Value: []byte(Payload(k))}
		if err := p.cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", k, err)
		}
	}
	p.n = n
}

// pstestServer is one Pub/Sub fake for the package: the client finds it
// through PUBSUB_EMULATOR_HOST, which the killed children inherit.
var pstestServer = sync.OnceValue(func() *pstest.Server {
	srv := pstest.NewServer()
	os.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr)
	return srv
})

// pubsubPeer is a topic with one subscription per task.
type pubsubPeer struct {
	srv   *pstest.Server
	topic string
	n     int
}

const pubsubProject = "weir-test"

// NewPubSub creates a topic on the package's pstest server.
func NewPubSub(t testing.TB) Peer {
	p := &pubsubPeer{srv: pstestServer(), topic: fmt.Sprintf("events_%d", time.Now().UnixNano())}
	if _, err := p.srv.GServer.CreateTopic(context.Background(), &pubsubpb.Topic{Name: p.topicName()}); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *pubsubPeer) topicName() string { return "projects/" + pubsubProject + "/topics/" + p.topic }

// url creates the task's subscription on first use.
func (p *pubsubPeer) URL(task string) string {
	sub := p.topic + "_" + task
	name := "projects/" + pubsubProject + "/subscriptions/" + sub
	p.srv.GServer.CreateSubscription(context.Background(), &pubsubpb.Subscription{Name: name, Topic: p.topicName(), AckDeadlineSeconds: 10})
	return "pubsub://" + pubsubProject + "/" + sub
}

func (p *pubsubPeer) Publish(_ testing.TB, n int) {
	for k := p.n + 1; k <= n; k++ {
		p.srv.Publish(p.topicName(), []byte(Payload(k)), nil)
	}
	p.n = n
}

// EnvSQS names the SQS server (JSON protocol) the SQS peers use:
// scripts/services.sh runs fauxqs there.
const EnvSQS = "WEIR_TEST_SQS"

// SQSEndpoint returns the test SQS server's URL (the test fails under
// CI=true without one, and is skipped otherwise) and gives the process —
// and the killed children it starts — dummy credentials: the test server
// ignores them, and no real ones are ever used against it.
func SQSEndpoint(t testing.TB) string {
	t.Helper()
	raw := os.Getenv(EnvSQS)
	if raw == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: run the tests with scripts/test.sh, which starts the servers and sets it", EnvSQS)
		}
		t.Skipf("%s is not set (scripts/test.sh sets it)", EnvSQS)
	}
	os.Setenv("AWS_ACCESS_KEY_ID", "weir-test")
	os.Setenv("AWS_SECRET_ACCESS_KEY", "weir-test")
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	os.Unsetenv("AWS_PROFILE")
	os.Unsetenv("AWS_SESSION_TOKEN")
	c := SQSClient(t, raw)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.ListQueues(ctx, &sqs.ListQueuesInput{}); err != nil {
		t.Fatalf("%s=%s is set but does not answer: %v (start it with scripts/services.sh)", EnvSQS, raw, err)
	}
	return raw
}

// SQSClient is an SQS client of the test server at endpoint.
func SQSClient(t testing.TB, endpoint string) *sqs.Client {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"))
	if err != nil {
		t.Fatal(err)
	}
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(endpoint) })
}

// SQSVisibility is the visibility timeout of the SQS peers' queues: a
// killed run's messages come back after it.
const SQSVisibility = 10 * time.Second

// sqsPeer is a queue per task on the test SQS server; Publish sends the
// feed to each.
type sqsPeer struct {
	endpoint string
	client   *sqs.Client
	prefix   string
	queues   []string // queue URLs, in creation order
	n        int
}

// NewSQS makes queues on the test SQS server (WEIR_TEST_SQS); they are
// deleted when the test ends.
func NewSQS(t testing.TB) Peer {
	ep := SQSEndpoint(t)
	p := &sqsPeer{endpoint: ep, client: SQSClient(t, ep), prefix: fmt.Sprintf("weir_t_%d", time.Now().UnixNano()%1e12)}
	t.Cleanup(func() {
		for _, q := range p.queues {
			p.client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(q)})
		}
	})
	return p
}

// URL creates the task's queue.
func (p *sqsPeer) URL(task string) string {
	name := p.prefix + "_" + task
	url := CreateSQSQueue(p.client, name, nil)
	p.queues = append(p.queues, url)
	return SQSURL(p.endpoint, name)
}

// SQSURL is the source URL of a queue on the test server.
func SQSURL(endpoint, queue string) string {
	return "sqs://" + queue + "?region=us-east-1&visibility_timeout=" + SQSVisibility.String() + "&endpoint=" + endpoint
}

// CreateSQSQueue creates a queue with the peers' visibility timeout (and
// attrs) and returns its URL; it panics on failure (test setup).
func CreateSQSQueue(c *sqs.Client, name string, attrs map[string]string) string {
	a := map[string]string{"VisibilityTimeout": strconv.Itoa(int(SQSVisibility / time.Second))}
	for k, v := range attrs {
		a[k] = v
	}
	out, err := c.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: a})
	if err != nil {
		panic(fmt.Sprintf("create queue %s: %v", name, err))
	}
	return aws.ToString(out.QueueUrl)
}

func (p *sqsPeer) Publish(t testing.TB, n int) {
	t.Helper()
	for _, q := range p.queues {
		for k := p.n + 1; k <= n; k++ {
			if _, err := p.client.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(q), MessageBody: aws.String(Payload(k))}); err != nil {
				t.Fatalf("send to %s: %v", q, err)
			}
		}
	}
	p.n = n
}
