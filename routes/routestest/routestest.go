// Package routestest holds what adapter tests share: finding the test
// servers, naming per-test schemas, and the conformance cell that the root
// routes matrix runs for every implemented (source, destination) pair.
package routestest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
)

// ServerURL returns the URL of a test server from env. Unset: the test fails
// under CI=true (a missing server must never pass as a skip) and is skipped
// otherwise. Set but unreachable: the test fails.
func ServerURL(t testing.TB, env string) string {
	t.Helper()
	raw := os.Getenv(env)
	if raw == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: run the tests with scripts/test.sh, which starts the servers and sets it", env)
		}
		t.Skipf("%s is not set (scripts/test.sh sets it)", env)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s: bad URL: %v", env, err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 3*time.Second)
	if err != nil {
		t.Fatalf("%s=%s is set but unreachable: %v (start it with scripts/services.sh)", env, routes.Redact(raw), err)
	}
	conn.Close()
	return raw
}

// Name returns a fresh identifier "<prefix>_<8 hex>", for per-test schemas
// and tables (weir_t_1a2b3c4d).
func Name(prefix string) string {
	var b [4]byte
	rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}

// Context returns a context for one test, cancelled after d or at the end
// of the test.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// CleanupContext is for t.Cleanup funcs: t.Context() is already cancelled
// there.
func CleanupContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Minute)
}
