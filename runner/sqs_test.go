package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/stream/streamtest"
)

// TestStream_SQSTruth: an sqs:// task whose queue does not exist is bad
// input (exit 2, naming the queue); one whose endpoint is down fails
// (exit 1, retried by the scheduler) after reconnect_attempts, naming the
// endpoint; neither is a drained source that exits 0. (sqs:// once passed
// lint and generate and then failed every run: "not built yet".)
func TestStream_SQSTruth(t *testing.T) {
	ep := streamtest.SQSEndpoint(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := l.Addr().String()
	l.Close()
	tests := []struct {
		name, url string
		badInput  bool
		want      string
	}{
		{"missing queue", "sqs://weir_t_no_such_queue?region=us-east-1&endpoint=" + ep, true, "weir_t_no_such_queue"},
		{"endpoint down", "sqs://q?region=us-east-1&endpoint=http://" + down, false, "unreachable after 2 reconnect attempts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := newTruthDAG(t, tt.url, "reconnect_attempts: 2", "1")
			r, err := Load(d.path, Options{Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			ctx, cancel := context.WithTimeout(testContext(t), 60*time.Second)
			defer cancel()
			rep, err := r.Once(ctx, "t")
			switch {
			case err == nil:
				t.Fatalf("run succeeded (%d events in): it must fail", rep.RowsIn)
			case ctx.Err() != nil:
				t.Fatalf("run hung: %v", err)
			case errors.Is(err, routes.ErrBadInput) != tt.badInput:
				t.Errorf("error %v: bad input %v, want %v", err, errors.Is(err, routes.ErrBadInput), tt.badInput)
			case !strings.Contains(err.Error(), tt.want):
				t.Errorf("error %v: want it to say %q", err, tt.want)
			}
		})
	}
}

// TestStream_SQSFIFOMerge: a FIFO queue's updates of a key (all in one
// message group) land in their order through small batches: the merge
// sink holds each key's last update, never an older one.
func TestStream_SQSFIFOMerge(t *testing.T) {
	ep := streamtest.SQSEndpoint(t)
	c := streamtest.SQSClient(t, ep)
	name := fmt.Sprintf("weir_t_%d_merge.fifo", time.Now().UnixNano()%1e12)
	qurl := streamtest.CreateSQSQueue(c, name, map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"})
	defer c.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(qurl)})
	const n = 40
	last := map[string]string{}
	for seq := 1; seq <= n; seq++ {
		id := seq % 6
		body := fmt.Sprintf(`{"id":%d,"seq":%d}`, id, seq)
		if _, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(qurl),
			MessageBody: aws.String(body), MessageGroupId: aws.String(fmt.Sprint("g", id%3))}); err != nil {
			t.Fatal(err)
		}
		last[fmt.Sprint(id)] = fmt.Sprint(seq)
	}
	d := newTruthDAG(t, streamtest.SQSURL(ep, name), "batch_size: 3, materialization: merge, key: [id]", "1")
	r, err := Load(d.path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rep := once(t, r, "t")
	ids, seqs := d.rows(t, "t", "id"), d.rows(t, "t", "seq")
	got := map[string]string{}
	for i := range ids {
		got[ids[i]] = seqs[i]
	}
	if !maps.Equal(got, last) {
		t.Errorf("merge sink after %d events in: id → seq %v, want each key's last update %v", rep.RowsIn, got, last)
	}
}

// TestStream_SQSStatus: weir status shows an sqs:// task's backlog (the
// queue's messages, as SQS approximates them) as its lag; weir reset is
// refused (SQS cannot seek).
func TestStream_SQSStatus(t *testing.T) {
	p := streamtest.NewSQS(t)
	d := newTruthDAG(t, p.URL("st"), "", "1")
	r, err := Load(d.path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p.Publish(t, 20) // 2 of them bad: quarantined
	checkStatus(t, r, false, "", 20, true)
	once(t, r, "t")
	checkStatus(t, r, true, "20", 0, true)
	p.Publish(t, 27)
	checkStatus(t, r, true, "20", 7, true)
	for _, to := range []string{"earliest", "latest", "5"} {
		checkReset(t, r, to, "", 0, 0, true, true)
	}
}

// TestLintStreams: a malformed sqs:// URL written in the dagfile (as a
// stream source or a connection) is a lint error at the source's line,
// its password never shown; a well-formed one, one built from ${VAR}s
// (checked when it runs) and other schemes pass.
func TestLintStreams(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weir.yaml")
	writeFile(t, path, `version: 1
connections:
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
  q: sqs://orders?wiat=5s
tasks:
  good:
    stream: {source: "sqs://orders.fifo?region=eu-west-1&wait=5s&visibility_timeout=2m", sink: lake:raw.good, materialization: merge, key: [id]}
  bad_param:
    stream: {source: "sqs://orders?visibility=30s", sink: lake:raw.a, materialization: merge, key: [id]}
  bad_wait:
    stream: {source: "sqs://orders?wait=60s", sink: lake:raw.b, materialization: merge, key: [id]}
  creds:
    stream: {source: "sqs://AKIA:s3cret@orders", sink: lake:raw.c, materialization: merge, key: [id]}
  via_conn:
    stream: {source: q, sink: lake:raw.d, materialization: merge, key: [id]}
  from_env:
    stream: {source: "sqs://${QUEUE}?bogus=1", sink: lake:raw.e, materialization: merge, key: [id]}
  kafka:
    stream: {source: "kafka://127.0.0.1:9092/t", sink: lake:raw.f, materialization: merge, key: [id]}
`)
	f, err := dagfile.LoadStatic(path)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := f.Select()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"bad_param": `unknown parameter "visibility"`,
		"bad_wait":  "wait",
		"creds":     "credentials do not go in the URL",
		"via_conn":  `unknown parameter "wiat"`,
	}
	got := map[string]string{}
	for _, fd := range LintStreams(f, tasks) {
		got[fd.Task] = fd.String()
		if fd.Rule != dagfile.RuleFormat || fd.Severity != dagfile.SeverityError || fd.Line == 0 {
			t.Errorf("finding %s: want a FORMAT error at the source's line", fd)
		}
		if strings.Contains(fd.Message, "s3cret") {
			t.Errorf("finding shows the password: %s", fd)
		}
	}
	for task, msg := range want {
		if !strings.Contains(got[task], msg) {
			t.Errorf("task %s: finding %q, want one saying %q", task, got[task], msg)
		}
	}
	for task := range got {
		if _, ok := want[task]; !ok {
			t.Errorf("task %s: unexpected finding %s", task, got[task])
		}
	}
}
