package claims

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/weirhq/weir/routes"
)

// DefaultEtcdPrefix is where an etcd:// URL without a path keeps its claims.
const DefaultEtcdPrefix = "/weir/claims"

// etcdStore keeps a task's claims under <prefix>/<task, path-escaped>/:
//
//	plan         the bucket count (one key: planners race on its creation)
//	b/<bucket>   {"token":N,"done":bool}: absent while never claimed
//	l/<bucket>   {"owner":…,"token":N,"ttl":S}, attached to the claim's
//	             etcd lease: a worker that stops renewing loses it when
//	             etcd expires the lease, with nobody calling anything
//
// A bucket is free when it is not done and has no l/ key. Every mutation
// is one Txn compared on the revisions it read. The lease clock is the
// etcd leader's: a lease lives its TTL from its last keep-alive as the
// leader counts it (a new leader restarts every lease's countdown, so a
// lease only ever lasts longer). Leases are whole seconds: a ttl is
// rounded up, and etcd raises it to its minimum (2 s with the default
// heartbeat).
type etcdStore struct {
	cli    *clientv3.Client
	prefix string // no trailing slash
}

// openEtcd: etcd://[user:password@]host:port[,host:port…][/prefix] over
// plain gRPC, or etcd+https://… over TLS with ?ca=FILE (the CA that signed
// the members' certificates; the system's roots without it) and, for
// members that ask for client certificates, cert=FILE&key=FILE. Several
// members are one cluster: the client balances over them and fails over
// when one stops answering. Open checks that a member answers.
func openEtcd(ctx context.Context, u *url.URL) (Store, error) {
	const form = "etcd://host:port[,host:port…][/prefix] or etcd+https://host:port[,…][/prefix][?ca=FILE&cert=FILE&key=FILE]"
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: claim store %s: %s (%s)", routes.ErrBadInput, redact(u), fmt.Sprintf(format, a...), form)
	}
	var endpoints []string
	for _, h := range strings.Split(u.Host, ",") {
		if host, port, err := net.SplitHostPort(h); err != nil || host == "" || port == "" {
			return nil, bad("member %q: want host:port", h)
		}
		endpoints = append(endpoints, h)
	}
	if u.Fragment != "" {
		return nil, bad("a fragment names nothing")
	}
	tlsCfg, err := etcdTLS(u)
	if err != nil {
		return nil, bad("%v", err)
	}
	prefix := strings.TrimRight(u.Path, "/")
	if prefix == "" {
		prefix = DefaultEtcdPrefix
	}
	wait := 10 * time.Second // to reach a member (and log in, with a user)
	if d, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(d))
	}
	proto := "http://"
	if tlsCfg != nil {
		proto = "https://"
	}
	cfg := clientv3.Config{
		DialTimeout: wait,
		TLS:         tlsCfg,
		Logger:      zap.NewNop(), // errors come back as errors
	}
	for _, e := range endpoints {
		cfg.Endpoints = append(cfg.Endpoints, proto+e)
	}
	if u.User != nil {
		cfg.Username = u.User.Username()
		cfg.Password, _ = u.User.Password()
	}
	cli, err := clientv3.New(cfg)
	if errors.Is(err, rpctypes.ErrAuthFailed) { // retrying will not help, fixing the URL will
		return nil, fmt.Errorf("%w: claim store %s: %w (check the user and password in the URL)", routes.ErrBadInput, redact(u), err)
	}
	if err != nil {
		return nil, fmt.Errorf("claim store %s: %w", redact(u), err)
	}
	// The dial does not block: ask every member at once; the first to
	// answer opens the store (a dead member must not use up the wait).
	cctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	answers := make(chan error, len(cfg.Endpoints))
	for _, e := range cfg.Endpoints {
		go func() {
			if _, err := cli.Status(cctx, e); err != nil {
				answers <- fmt.Errorf("%s: %w%s", e, err, handshake(e, tlsCfg))
				return
			}
			answers <- nil
		}()
	}
	var errs []error
	for range cfg.Endpoints {
		if err := <-answers; err != nil {
			errs = append(errs, err)
			continue
		}
		return &etcdStore{cli: cli, prefix: prefix}, nil
	}
	cli.Close()
	return nil, fmt.Errorf("claim store %s: no member answered: %w", redact(u), errors.Join(errs...))
}

// handshake says why a member that did not answer gRPC refused TLS, or
// that it speaks TLS to a plain etcd:// URL: gRPC reports either as a
// deadline only.
func handshake(endpoint string, cfg *tls.Config) string {
	host := endpoint[strings.Index(endpoint, "://")+3:]
	probe := cfg
	if probe == nil {
		probe = &tls.Config{InsecureSkipVerify: true} // only to ask whether it speaks TLS
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 3 * time.Second}, "tcp", host, probe.Clone())
	if err == nil && cfg != nil {
		// a member that wants a client certificate says so after the handshake
		conn.SetReadDeadline(time.Now().Add(time.Second))
		_, err = conn.Read(make([]byte, 1))
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			err = nil
		}
	}
	if conn != nil {
		conn.Close()
	}
	switch {
	case cfg == nil && err == nil:
		return " (the member speaks TLS: write etcd+https://…)"
	case cfg != nil && err != nil:
		return fmt.Sprintf(" (TLS: %v)", err)
	}
	return ""
}

// etcdTLS is the TLS configuration an etcd+https:// URL's query asks for;
// nil for etcd://, which takes no query.
func etcdTLS(u *url.URL) (*tls.Config, error) {
	q := u.Query()
	if u.Scheme != "etcd+https" {
		if u.RawQuery != "" {
			return nil, errors.New("an etcd:// URL takes no query (TLS is etcd+https://)")
		}
		return nil, nil
	}
	for k := range q {
		if k != "ca" && k != "cert" && k != "key" {
			return nil, fmt.Errorf("unknown parameter %q (known: ca, cert, key)", k)
		}
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca := q.Get("ca"); ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("ca=: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca=%s: no PEM certificate in it", ca)
		}
	}
	cert, key := q.Get("cert"), q.Get("key")
	if (cert == "") != (key == "") {
		return nil, errors.New("cert= and key= go together (the client certificate and its private key)")
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("cert=, key=: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// taskKey is task's directory: escaped, so that no task's keys are a
// prefix of another's ("a" and "a/b", "a" and "ab").
func (s *etcdStore) taskKey(task string) string {
	return s.prefix + "/" + url.PathEscape(task) + "/"
}

func bucketKey(dir string, b int) string { return dir + "b/" + strconv.Itoa(b) }
func leaseKey(dir string, b int) string  { return dir + "l/" + strconv.Itoa(b) }

type etcdBucket struct {
	Token int64 `json:"token"`
	Done  bool  `json:"done"`
}

type etcdLease struct {
	Owner string `json:"owner"`
	Token int64  `json:"token"`
	TTL   int64  `json:"ttl"` // seconds, as asked (etcd may grant more)
}

// etcdTask is one read of a task's keys at one revision.
type etcdTask struct {
	planRev int64 // the plan key's ModRevision; 0 when not planned
	buckets int
	state   map[int]etcdBucket
	stateKV map[int]int64 // bucket → its b/ key's ModRevision
	lease   map[int]etcdLease
	leaseKV map[int]int64 // bucket → its l/ key's ModRevision
	leaseID map[int]clientv3.LeaseID
}

func (s *etcdStore) read(ctx context.Context, task string) (*etcdTask, error) {
	dir := s.taskKey(task)
	resp, err := s.cli.Get(ctx, dir, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("claims: read %s: %w", task, err)
	}
	return parseTask(task, dir, resp.Kvs)
}

func parseTask(task, dir string, kvs []*mvccpb.KeyValue) (*etcdTask, error) {
	t := &etcdTask{state: map[int]etcdBucket{}, stateKV: map[int]int64{}, lease: map[int]etcdLease{},
		leaseKV: map[int]int64{}, leaseID: map[int]clientv3.LeaseID{}}
	for _, kv := range kvs {
		name := strings.TrimPrefix(string(kv.Key), dir)
		if name == "plan" {
			n, err := strconv.Atoi(string(kv.Value))
			if err != nil {
				return nil, fmt.Errorf("claims: task %s: plan key %s holds %q: %w", task, kv.Key, kv.Value, err)
			}
			t.planRev, t.buckets = kv.ModRevision, n
			continue
		}
		kind, num, ok := strings.Cut(name, "/")
		b, err := strconv.Atoi(num)
		if !ok || err != nil || (kind != "b" && kind != "l") {
			return nil, fmt.Errorf("claims: task %s: unexpected key %s under the claim store's prefix", task, kv.Key)
		}
		var v any = &etcdBucket{}
		if kind == "l" {
			v = &etcdLease{}
		}
		if err := json.Unmarshal(kv.Value, v); err != nil {
			return nil, fmt.Errorf("claims: task %s: key %s: %w", task, kv.Key, err)
		}
		if kind == "b" {
			t.state[b], t.stateKV[b] = *v.(*etcdBucket), kv.ModRevision
		} else {
			t.lease[b], t.leaseKV[b], t.leaseID[b] = *v.(*etcdLease), kv.ModRevision, clientv3.LeaseID(kv.Lease)
		}
	}
	return t, nil
}

// free is the lowest bucket neither done nor leased, or -1.
func (t *etcdTask) free() int {
	for b := 0; b < t.buckets; b++ {
		if _, held := t.lease[b]; !held && !t.state[b].Done {
			return b
		}
	}
	return -1
}

func (s *etcdStore) Plan(ctx context.Context, task string, n int) (int, error) {
	if err := checkPlan(task, n); err != nil {
		return 0, err
	}
	key := s.taskKey(task) + "plan"
	resp, err := s.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, strconv.Itoa(n))).Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return 0, fmt.Errorf("claims: plan %s: %w", task, err)
	}
	if resp.Succeeded {
		return n, nil
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) != 1 {
		return 0, fmt.Errorf("claims: plan %s: the plan key vanished while read", task)
	}
	have, err := strconv.Atoi(string(kvs[0].Value))
	if err != nil {
		return 0, fmt.Errorf("claims: task %s: plan key holds %q: %w", task, kvs[0].Value, err)
	}
	if have != n {
		return have, planMismatch(task, have, n)
	}
	return have, nil
}

// leaseSeconds is ttl in whole seconds, rounded up (never shorter).
func leaseSeconds(ttl time.Duration) int64 {
	return max(1, int64((ttl+time.Second-1)/time.Second))
}

func (s *etcdStore) Claim(ctx context.Context, task, owner string, ttl time.Duration) (Claim, error) {
	if owner == "" {
		return Claim{}, errors.New("claims: empty owner")
	}
	t, err := s.read(ctx, task)
	if err != nil {
		return Claim{}, err
	}
	var lease *clientv3.LeaseGrantResponse
	defer func() { // a lease granted for a claim that was not made
		if lease != nil {
			s.revoke(ctx, lease.ID)
		}
	}()
	dir := s.taskKey(task)
	for {
		if t.planRev == 0 {
			return Claim{}, fmt.Errorf("claims: task %s: %w", task, ErrNotPlanned)
		}
		b := t.free()
		if b < 0 {
			return Claim{}, ErrNoneFree
		}
		if lease == nil {
			if lease, err = s.cli.Grant(ctx, leaseSeconds(ttl)); err != nil {
				return Claim{}, fmt.Errorf("claims: claim %s: grant a lease: %w", task, err)
			}
		}
		token := t.state[b].Token + 1
		bk, lk := bucketKey(dir, b), leaseKey(dir, b)
		state, _ := json.Marshal(etcdBucket{Token: token})
		held, _ := json.Marshal(etcdLease{Owner: owner, Token: token, TTL: leaseSeconds(ttl)})
		resp, err := s.cli.Txn(ctx).If(
			clientv3.Compare(clientv3.ModRevision(dir+"plan"), "=", t.planRev),
			clientv3.Compare(clientv3.ModRevision(bk), "=", t.stateKV[b]), // 0: never claimed
			clientv3.Compare(clientv3.CreateRevision(lk), "=", 0),
		).Then(
			clientv3.OpPut(bk, string(state)),
			clientv3.OpPut(lk, string(held), clientv3.WithLease(lease.ID)),
		).Else(clientv3.OpGet(dir, clientv3.WithPrefix())).Commit()
		if err != nil {
			return Claim{}, fmt.Errorf("claims: claim %s bucket %d: %w", task, b, err)
		}
		if resp.Succeeded {
			c := Claim{Task: task, Bucket: b, Buckets: t.buckets, Owner: owner, Token: token,
				Expires: time.Now().Add(time.Duration(lease.TTL) * time.Second)}
			lease = nil
			return c, nil
		}
		// another worker changed the task meanwhile: look again
		if t, err = parseTask(task, dir, resp.Responses[0].GetResponseRange().Kvs); err != nil {
			return Claim{}, err
		}
	}
}

// revoke ends a lease no key needs any more. Best effort: an unrevoked
// lease holds no key and expires by itself.
func (s *etcdStore) revoke(ctx context.Context, id clientv3.LeaseID) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	s.cli.Revoke(ctx, id)
}

// current reads c's bucket and returns its lease key's revision and lease
// when c is still its current claim, else ErrLost. A claim whose lease
// expired is lost at once, claimed again or not: etcd deleted its key.
func (s *etcdStore) current(ctx context.Context, c Claim, verb string) (rev int64, l etcdLease, id clientv3.LeaseID, err error) {
	resp, err := s.cli.Get(ctx, leaseKey(s.taskKey(c.Task), c.Bucket))
	if err != nil {
		return 0, l, 0, fmt.Errorf("claims: %s %s bucket %d: %w", verb, c.Task, c.Bucket, err)
	}
	if len(resp.Kvs) != 1 {
		return 0, l, 0, lost(c)
	}
	kv := resp.Kvs[0]
	if err := json.Unmarshal(kv.Value, &l); err != nil {
		return 0, l, 0, fmt.Errorf("claims: %s %s bucket %d: key %s: %w", verb, c.Task, c.Bucket, kv.Key, err)
	}
	if l.Owner != c.Owner || l.Token != c.Token {
		return 0, l, 0, lost(c)
	}
	return kv.ModRevision, l, clientv3.LeaseID(kv.Lease), nil
}

// Renew keeps c's lease alive when ttl rounds to the seconds it asked for.
// An etcd lease's TTL is fixed, so another ttl grants a new lease and
// moves the claim's key onto it by a Txn on the key's revision, then
// revokes the old one; if the move loses, the new lease is revoked and
// the claim is lost.
func (s *etcdStore) Renew(ctx context.Context, c Claim, ttl time.Duration) (Claim, error) {
	rev, l, id, err := s.current(ctx, c, "renew")
	if err != nil {
		return c, err
	}
	lk := leaseKey(s.taskKey(c.Task), c.Bucket)
	if secs := leaseSeconds(ttl); secs != l.TTL {
		return s.move(ctx, c, lk, rev, l, id, secs)
	}
	ka, err := s.cli.KeepAliveOnce(ctx, id)
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return c, lost(c)
	}
	if err != nil {
		return c, fmt.Errorf("claims: renew %s bucket %d: %w", c.Task, c.Bucket, err)
	}
	// The key may have been deleted (released, completed, forgotten)
	// between the read and the keep-alive: it must still be the one read.
	resp, err := s.cli.Get(ctx, lk)
	if err != nil {
		return c, fmt.Errorf("claims: renew %s bucket %d: %w", c.Task, c.Bucket, err)
	}
	if len(resp.Kvs) != 1 || resp.Kvs[0].ModRevision != rev {
		return c, lost(c)
	}
	c.Expires = time.Now().Add(time.Duration(ka.TTL) * time.Second)
	return c, nil
}

func (s *etcdStore) move(ctx context.Context, c Claim, lk string, rev int64, l etcdLease, old clientv3.LeaseID, secs int64) (Claim, error) {
	lease, err := s.cli.Grant(ctx, secs)
	if err != nil {
		return c, fmt.Errorf("claims: renew %s bucket %d: grant a lease: %w", c.Task, c.Bucket, err)
	}
	l.TTL = secs
	held, _ := json.Marshal(l)
	resp, err := s.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(lk), "=", rev)).
		Then(clientv3.OpPut(lk, string(held), clientv3.WithLease(lease.ID))).Commit()
	if err != nil || !resp.Succeeded {
		s.revoke(ctx, lease.ID)
		if err != nil {
			return c, fmt.Errorf("claims: renew %s bucket %d: %w", c.Task, c.Bucket, err)
		}
		return c, lost(c)
	}
	s.revoke(ctx, old)
	c.Expires = time.Now().Add(time.Duration(lease.TTL) * time.Second)
	return c, nil
}

func (s *etcdStore) Complete(ctx context.Context, c Claim) error {
	done, _ := json.Marshal(etcdBucket{Token: c.Token, Done: true})
	return s.end(ctx, c, "complete", clientv3.OpPut(bucketKey(s.taskKey(c.Task), c.Bucket), string(done)))
}

func (s *etcdStore) Release(ctx context.Context, c Claim) error {
	return s.end(ctx, c, "release")
}

// end deletes c's lease key, with ops, if c is still the current claim,
// and revokes its lease.
func (s *etcdStore) end(ctx context.Context, c Claim, verb string, ops ...clientv3.Op) error {
	rev, _, id, err := s.current(ctx, c, verb)
	if err != nil {
		return err
	}
	lk := leaseKey(s.taskKey(c.Task), c.Bucket)
	resp, err := s.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(lk), "=", rev)).
		Then(append(ops, clientv3.OpDelete(lk))...).Commit()
	if err != nil {
		return fmt.Errorf("claims: %s %s bucket %d: %w", verb, c.Task, c.Bucket, err)
	}
	if !resp.Succeeded {
		return lost(c)
	}
	s.revoke(ctx, id)
	return nil
}

// List reads each held bucket's remaining TTL from etcd; Expires is that
// TTL from the caller's now (etcd keeps no expiry time, only a countdown).
func (s *etcdStore) List(ctx context.Context, task string) ([]Claim, error) {
	t, err := s.read(ctx, task)
	if err != nil {
		return nil, err
	}
	var out []Claim
	for b := 0; b < t.buckets; b++ {
		c := Claim{Task: task, Bucket: b, Buckets: t.buckets, Token: t.state[b].Token, Done: t.state[b].Done}
		if l, ok := t.lease[b]; ok {
			ttl, err := s.cli.TimeToLive(ctx, t.leaseID[b])
			if err != nil {
				return nil, fmt.Errorf("claims: list %s bucket %d: %w", task, b, err)
			}
			if ttl.TTL > 0 { // else it expired since the read: free
				c.Owner, c.Expires = l.Owner, time.Now().Add(time.Duration(ttl.TTL)*time.Second)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func (s *etcdStore) Forget(ctx context.Context, task string) error {
	if _, err := s.cli.Delete(ctx, s.taskKey(task), clientv3.WithPrefix()); err != nil {
		return fmt.Errorf("claims: forget %s: %w", task, err)
	}
	return nil
}

func (s *etcdStore) Close() error { return s.cli.Close() }
