package stream

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/weirhq/weir/routes"
)

// TestPubSub_Reachability: the Pub/Sub client's streaming pull retries an
// unreachable service for ever without a word, so an available_now run
// once ended at the first empty batch with exit 0. A service that is down
// now fails the open after reconnect_attempts (a failure, exit 1); one
// that goes away mid-run fails Drained the same way; a subscription that
// does not exist is bad input (exit 2); a reachable, idle one is drained.
// (Not parallel: PUBSUB_EMULATOR_HOST is the process's.)
func TestPubSub_Reachability(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts := Options{ReconnectAttempts: 2, Log: t.Logf}

	t.Setenv("PUBSUB_EMULATOR_HOST", down)
	_, err = Open(ctx, "pubsub://p/s", opts)
	if err == nil || errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "unreachable after 2 reconnect attempts") {
		t.Fatalf("open with the service down: %v, want a failure after 2 reconnect attempts", err)
	}

	srv := pstest.NewServer()
	stop := sync.OnceValue(srv.Close) // a second Close panics
	defer stop()
	t.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr)
	if _, err := Open(ctx, "pubsub://p/nope", opts); !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("open of a missing subscription: %v, want bad input", err)
	}
	if _, err := srv.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/p/topics/t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.GServer.CreateSubscription(ctx, &pubsubpb.Subscription{Name: "projects/p/subscriptions/s", Topic: "projects/p/topics/t"}); err != nil {
		t.Fatal(err)
	}
	src, err := Open(ctx, "pubsub://p/s", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if ok, err := src.(Drainer).Drained(ctx); !ok || err != nil {
		t.Errorf("an idle, reachable subscription: drained %v, %v; want drained", ok, err)
	}
	stop()
	var derr error
	for i := 0; i < 5 && derr == nil; i++ {
		ok, err := src.(Drainer).Drained(ctx)
		if ok {
			t.Fatalf("drained with the service gone (check %d)", i+1)
		}
		derr = err
	}
	if derr == nil || errors.Is(derr, routes.ErrBadInput) || !strings.Contains(derr.Error(), "unreachable after 2 reconnect attempts") {
		t.Errorf("drained with the service gone: %v, want a failure after 2 reconnect attempts", derr)
	}
}
