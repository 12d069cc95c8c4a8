// Package claimstest gives tests claim stores on the project's test
// servers (scripts/services.sh).
package claimstest

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/weirhq/weir/routes/routestest"
)

// EtcdURL is an etcd:// claim store URL of a fresh prefix of the test etcd
// (WEIR_TEST_ETCD; routestest.ServerURL's rules when it is missing); the
// prefix's keys are deleted at the end of the test.
func EtcdURL(t testing.TB) string {
	t.Helper()
	raw := strings.TrimRight(routestest.ServerURL(t, "WEIR_TEST_ETCD"), "/") + "/weir-test/" + routestest.Name("claims")
	cli, prefix := EtcdClient(t, raw)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := cli.Delete(ctx, prefix+"/", clientv3.WithPrefix()); err != nil {
			t.Errorf("cleanup of %s: %v", prefix, err)
		}
	})
	return raw
}

// EtcdClient is a plain client of the etcd a claim store URL names (closed
// at the end of the test), and the URL's key prefix.
func EtcdClient(t testing.TB, raw string) (*clientv3.Client, string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"http://" + u.Host}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli, u.Path
}
