// Package claimstest gives tests claim stores on the project's test
// servers (scripts/services.sh).
package claimstest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
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

// etcdBin is Debian's etcd-server, which scripts/services.sh installs.
const etcdBin = "/usr/bin/etcd"

// PrivateEtcd starts a cluster of n etcd members of the test's own in a
// temporary directory, for what the shared test member does not have (TLS,
// authentication, several members): each listens on 127.0.0.1 at free
// ports, and all are killed at the end of the test. With tls (the
// members' certificate and key and, for client certificates, the CA that
// signs them) they serve https. It returns once every member serves.
func PrivateEtcd(t testing.TB, n int, tls *EtcdTLS) *Cluster {
	t.Helper()
	if _, err := os.Stat(etcdBin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %v (scripts/services.sh installs etcd-server)", etcdBin, err)
		}
		t.Skipf("%s: %v", etcdBin, err)
	}
	proto := "http://"
	if tls != nil {
		proto = "https://"
	}
	c := &Cluster{}
	var peers, initial []string
	for i := range n {
		c.Members = append(c.Members, freePort(t))
		peers = append(peers, "http://"+freePort(t))
		initial = append(initial, fmt.Sprintf("m%d=%s", i, peers[i]))
	}
	dir := t.TempDir()
	var logs []string
	for i, member := range c.Members {
		clientURL := proto + member
		args := []string{"--name", fmt.Sprintf("m%d", i), "--data-dir", filepath.Join(dir, fmt.Sprintf("m%d", i)),
			"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
			"--listen-peer-urls", peers[i], "--initial-advertise-peer-urls", peers[i],
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new",
			"--logger", "zap", "--log-outputs", "stderr", "--log-level", "info"}
		if tls != nil {
			args = append(args, "--cert-file", tls.Cert, "--key-file", tls.Key)
			if tls.ClientCA != "" {
				args = append(args, "--client-cert-auth", "--trusted-ca-file", tls.ClientCA)
			}
		}
		logPath := filepath.Join(dir, fmt.Sprintf("m%d.log", i))
		logf, err := os.Create(logPath)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(etcdBin, args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		logf.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		kill := func() { cmd.Process.Kill(); <-done }
		t.Cleanup(kill)
		c.kill = append(c.kill, kill)
		c.done = append(c.done, done)
		logs = append(logs, logPath)
	}
	deadline := time.Now().Add(30 * time.Second)
	for i, logPath := range logs {
		for {
			b, _ := os.ReadFile(logPath)
			if strings.Contains(string(b), `"msg":"serving client traffic`) {
				break
			}
			select {
			case <-c.done[i]:
				t.Fatalf("private etcd member %d exited: %s", i, b)
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("private etcd member %d did not serve within 30 s: %s", i, b)
			}
		}
	}
	return c
}

// Cluster is PrivateEtcd's cluster.
type Cluster struct {
	Members []string // host:port of each member's client URL
	kill    []func()
	done    []chan struct{}
}

// Kill stops member i (SIGKILL) and waits for it to exit.
func (c *Cluster) Kill(i int) { c.kill[i]() }

// EtcdTLS names PEM files for PrivateEtcd.
type EtcdTLS struct {
	Cert, Key string // the member's
	ClientCA  string // when set, clients must show a certificate it signed
}

// freePort is a 127.0.0.1 port nothing listened on a moment ago.
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
