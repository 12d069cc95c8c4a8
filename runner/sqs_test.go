package runner

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

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
