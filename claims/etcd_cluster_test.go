package claims_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/weirhq/weir/claims"
	"github.com/weirhq/weir/claims/claimstest"
	"github.com/weirhq/weir/routes"
)

// claimCycle plans a task of 3 buckets in the store raw names and runs
// each bucket through claim, renew and complete.
func claimCycle(t *testing.T, raw string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := claims.Open(ctx, raw)
	if err != nil {
		t.Fatalf("Open(%s): %v", routes.Redact(raw), err)
	}
	defer s.Close()
	cycle(t, ctx, s, "cycle")
}

func cycle(t *testing.T, ctx context.Context, s claims.Store, task string) {
	t.Helper()
	if _, err := s.Plan(ctx, task, 3); err != nil {
		t.Fatalf("Plan: %v", err)
	}
	for range 3 {
		c, err := s.Claim(ctx, task, "w", 10*time.Second)
		if err != nil {
			t.Fatalf("Claim: %v", err)
		}
		if c, err = s.Renew(ctx, c, 10*time.Second); err != nil {
			t.Fatalf("Renew: %v", err)
		}
		if err := s.Complete(ctx, c); err != nil {
			t.Fatalf("Complete: %v", err)
		}
	}
	if _, err := s.Claim(ctx, task, "w", time.Second); !errors.Is(err, claims.ErrNoneFree) {
		t.Fatalf("a fourth Claim = %v, want ErrNoneFree", err)
	}
}

// TestEtcd_Members: a URL may list several members of one cluster. One
// that does not answer (first or last) does not stop Open or the claims;
// in a cluster of three, the claims go on after the member the client
// used is killed (SIGKILL), on the two left.
func TestEtcd_Members(t *testing.T) {
	live := claimstest.EtcdURL(t)
	u, err := url.Parse(live)
	if err != nil {
		t.Fatal(err)
	}
	dead := "127.0.0.1:1" // nothing listens on port 1
	for _, hosts := range []string{dead + "," + u.Host, u.Host + "," + dead} {
		t.Run(hosts, func(t *testing.T) {
			claimCycle(t, "etcd://"+hosts+u.Path+"/"+strings.ReplaceAll(hosts, ":", "_"))
		})
	}
	t.Run("none answers", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err := claims.Open(ctx, "etcd://u:s3cret@127.0.0.1:1,127.0.0.1:2/p")
		if err == nil || errors.Is(err, routes.ErrBadInput) || strings.Contains(err.Error(), "s3cret") ||
			!strings.Contains(err.Error(), "127.0.0.1:1") || !strings.Contains(err.Error(), "127.0.0.1:2") {
			t.Errorf("Open with no member answering = %v, want a failure naming both members, without the password", err)
		}
	})
	t.Run("failover", func(t *testing.T) {
		c := claimstest.PrivateEtcd(t, 3, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		s, err := claims.Open(ctx, "etcd://"+strings.Join(c.Members, ",")+"/weir")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		held, err := s.Plan(ctx, "t", 4)
		if err != nil || held != 4 {
			t.Fatalf("Plan = %d, %v", held, err)
		}
		first, err := s.Claim(ctx, "t", "w", 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.Kill(0) // the client's first endpoint: where it started
		// The cluster elects a leader again if m0 led it: each call is
		// retried for a few seconds until the two members answer.
		retry := func(what string, f func() error) {
			t.Helper()
			var err error
			for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
				if err = f(); err == nil {
					return
				}
			}
			t.Fatalf("%s after a member was killed: %v", what, err)
		}
		retry("Renew", func() error { var err error; first, err = s.Renew(ctx, first, 10*time.Second); return err })
		retry("Complete", func() error { return s.Complete(ctx, first) })
		cycle(t, ctx, s, "t2")
		bs, err := s.List(ctx, "t")
		if err != nil || len(bs) != 4 || !bs[0].Done || bs[1].Done {
			t.Fatalf("List after the failover = %+v, %v; want bucket 0 done, 1–3 free", bs, err)
		}
	})
}

// TestEtcd_TLS: etcd+https:// with ca= (and cert=/key= when the members
// ask for a client certificate) claims over TLS. Without the client
// certificate, with a CA that did not sign the members' certificate, and
// with plain etcd:// the store does not open; a missing file or a cert=
// without key= is bad input.
func TestEtcd_TLS(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := makeCert(t, dir, "ca", nil, nil)
	makeCert(t, dir, "server", ca, caKey)
	makeCert(t, dir, "client", ca, caKey)
	makeCert(t, dir, "otherca", nil, nil) // signed nothing here
	f := func(name string) string { return filepath.Join(dir, name) }
	c := claimstest.PrivateEtcd(t, 1, &claimstest.EtcdTLS{Cert: f("server.pem"), Key: f("server-key.pem"), ClientCA: f("ca.pem")})
	host := c.Members[0]
	good := "etcd+https://" + host + "/weir?ca=" + f("ca.pem") + "&cert=" + f("client.pem") + "&key=" + f("client-key.pem")
	claimCycle(t, good)

	ctx := context.Background()
	for name, tc := range map[string]struct{ raw, says string }{
		"no client certificate": {"etcd+https://" + host + "/weir?ca=" + f("ca.pem"), "bad certificate"},
		"another CA":            {"etcd+https://" + host + "/weir?ca=" + f("otherca.pem") + "&cert=" + f("client.pem") + "&key=" + f("client-key.pem"), "unknown authority"},
		"plain etcd://":         {"etcd://" + host + "/weir", "write etcd+https://"},
	} {
		raw := tc.raw
		t.Run(name, func(t *testing.T) {
			cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			s, err := claims.Open(cctx, raw)
			if err == nil {
				// the handshake may fail only at the first call
				_, err = s.Plan(cctx, "x", 1)
				s.Close()
			}
			t.Logf("%s: %v", name, err)
			if err == nil || errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("%s: %v, want a failure that is not bad input, saying %q", name, err, tc.says)
			}
		})
	}
	for name, raw := range map[string]string{
		"missing ca file":  "etcd+https://" + host + "/weir?ca=" + f("nope.pem"),
		"cert without key": "etcd+https://" + host + "/weir?ca=" + f("ca.pem") + "&cert=" + f("client.pem"),
		"unknown param":    "etcd+https://" + host + "/weir?cafile=" + f("ca.pem"),
		"not PEM":          "etcd+https://" + host + "/weir?ca=" + f("server-key.pem.txt"),
	} {
		t.Run(name, func(t *testing.T) {
			if name == "not PEM" {
				os.WriteFile(f("server-key.pem.txt"), []byte("not a certificate"), 0o600)
			}
			_, err := claims.Open(ctx, raw)
			if !errors.Is(err, routes.ErrBadInput) {
				t.Errorf("%s: %v, want bad input", name, err)
			}
		})
	}
}

// TestEtcd_Auth: against a cluster with authentication on, a user with a
// role on the store's prefix only (and leases) claims through
// etcd://user:password@…; a wrong password is bad input (exit 2, as a
// database's refused credentials are), and no message shows it.
func TestEtcd_Auth(t *testing.T) {
	c := claimstest.PrivateEtcd(t, 1, nil)
	host := c.Members[0]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"http://" + host}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	steps := []func() error{
		func() error { _, err := cli.UserAdd(ctx, "root", "rootpw"); return err },
		func() error { _, err := cli.RoleAdd(ctx, "root"); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "weir", "s3cret"); return err },
		func() error { _, err := cli.RoleAdd(ctx, "claims"); return err },
		func() error {
			_, err := cli.RoleGrantPermission(ctx, "claims", "/weir/", clientv3.GetPrefixRangeEnd("/weir/"), clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error { _, err := cli.UserGrantRole(ctx, "weir", "claims"); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("auth setup step %d: %v", i, err)
		}
	}
	claimCycle(t, "etcd://weir:s3cret@"+host+"/weir")

	cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
	defer ccancel()
	_, err = claims.Open(cctx, "etcd://weir:wrong-s3cret@"+host+"/weir")
	t.Logf("wrong password: %v", err)
	if !errors.Is(err, routes.ErrBadInput) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a wrong password: %v, want bad input (exit 2) without the password", err)
	}
	// outside the role's prefix the user may do nothing
	s, err := claims.Open(cctx, "etcd://weir:s3cret@"+host+"/elsewhere")
	if err == nil {
		_, err = s.Plan(cctx, "x", 1)
		s.Close()
	}
	if err == nil {
		t.Errorf("a prefix outside the user's role: planned, want permission denied")
	}
}

// makeCert writes name.pem and name-key.pem in dir: a CA when parent is
// nil, else a certificate for 127.0.0.1 signed by parent.
func makeCert(t *testing.T, dir, name string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
	}
	signer, signerKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	} else {
		signer, signerKey = parent, parentKey
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write := func(file, typ string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, file), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(name+".pem", "CERTIFICATE", der)
	write(name+"-key.pem", "EC PRIVATE KEY", keyDER)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}
