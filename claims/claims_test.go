package claims_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/weirhq/weir/claims"
	"github.com/weirhq/weir/claims/claimstest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// backends are the stores every test runs against: a fresh schema of the
// test PostgreSQL (dropped at the end), a fresh prefix of the test etcd
// (its keys deleted at the end) and a fresh SQLite file.
func backends(t *testing.T) map[string]string {
	t.Helper()
	etcd := claimstest.EtcdURL(t)
	pg := routestest.ServerURL(t, "WEIR_TEST_PG")
	schema := routestest.Name("weir_claims")
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("schema", schema)
	u.RawQuery = q.Encode()
	t.Cleanup(func() {
		db, err := sql.Open("pgx", pg)
		if err != nil {
			t.Error(err)
			return
		}
		defer db.Close()
		if _, err := db.Exec(`DROP SCHEMA IF EXISTS "` + schema + `" CASCADE`); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return map[string]string{
		"postgres": u.String(),
		"etcd":     etcd,
		"sqlite":   "sqlite://" + filepath.Join(t.TempDir(), "claims.db"),
	}
}

func open(t *testing.T, raw string) claims.Store {
	t.Helper()
	s, err := claims.Open(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// claimOnceFree claims a bucket of task for owner (a minute's lease) as
// soon as one is free, polling for 15 s at most: once a lease has expired.
func claimOnceFree(t *testing.T, s claims.Store, task, owner string) claims.Claim {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := s.Claim(context.Background(), task, owner, time.Minute)
		if err == nil {
			return c
		}
		if !errors.Is(err, claims.ErrNoneFree) || time.Now().After(deadline) {
			t.Fatalf("claim of %s once a lease has expired = %v", task, err)
		}
	}
}

// TestStore_Plan: planning is idempotent, a second plan with another
// count is refused naming both, and claiming an unplanned task says so.
func TestStore_Plan(t *testing.T) {
	for name, raw := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, raw)
			if _, err := s.Claim(ctx, "t", "w", time.Minute); !errors.Is(err, claims.ErrNotPlanned) {
				t.Fatalf("claim before plan = %v, want ErrNotPlanned", err)
			}
			for range 2 {
				if n, err := s.Plan(ctx, "t", 4); err != nil || n != 4 {
					t.Fatalf("plan = %d, %v; want 4", n, err)
				}
			}
			if n, err := s.Plan(ctx, "t", 8); err == nil || n != 4 || !strings.Contains(err.Error(), "planned with 4 buckets, not 8") {
				t.Fatalf("re-plan with 8 = %d, %v; want the 4 it has and an error naming both", n, err)
			}
			l, err := s.List(ctx, "t")
			if err != nil || len(l) != 4 {
				t.Fatalf("list = %v, %v", l, err)
			}
			for i, c := range l {
				if c.Bucket != i || c.Buckets != 4 || c.Owner != "" || c.Done || c.Token != 0 {
					t.Errorf("bucket %d = %+v, want free", i, c)
				}
			}
			if _, err := s.Plan(ctx, "", 1); err == nil {
				t.Error("empty task planned")
			}
			if _, err := s.Plan(ctx, "u", 0); err == nil {
				t.Error("0 buckets planned")
			}
		})
	}
}

// TestStore_ConcurrentPlans: planners racing with different counts leave
// one plan, never a mix.
func TestStore_ConcurrentPlans(t *testing.T) {
	for name, raw := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			for round := range 10 {
				task := fmt.Sprintf("p%d", round)
				var wg sync.WaitGroup
				for i := range 4 {
					wg.Go(func() {
						s, err := claims.Open(ctx, raw)
						if err != nil {
							t.Error(err)
							return
						}
						defer s.Close()
						s.Plan(ctx, task, 2+i) // all but one are refused
					})
				}
				wg.Wait()
				l, err := open(t, raw).List(ctx, task)
				if err != nil || len(l) == 0 {
					t.Fatalf("round %d: list = %v, %v", round, l, err)
				}
				for _, c := range l {
					if c.Buckets != len(l) {
						t.Fatalf("round %d: a mixed plan: %+v", round, l)
					}
				}
			}
		})
	}
}

// TestStore_FreeRace: workers with their own connections claim and
// complete buckets as fast as they can, many rounds, no pauses: every
// bucket is completed exactly once and no bucket is ever held by two
// workers at a time.
func TestStore_FreeRace(t *testing.T) {
	const workers, buckets, rounds = 6, 48, 8
	for name, raw := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			planner := open(t, raw)
			for round := range rounds {
				task := fmt.Sprintf("race%d", round)
				if _, err := planner.Plan(ctx, task, buckets); err != nil {
					t.Fatal(err)
				}
				var mu sync.Mutex
				held := map[int]string{}
				completed := map[int]int{}
				var wg sync.WaitGroup
				for w := range workers {
					owner := fmt.Sprintf("w%d", w)
					wg.Go(func() {
						s, err := claims.Open(ctx, raw)
						if err != nil {
							t.Error(err)
							return
						}
						defer s.Close()
						for {
							c, err := s.Claim(ctx, task, owner, time.Minute)
							if errors.Is(err, claims.ErrNoneFree) {
								return
							}
							if err != nil {
								t.Error(err)
								return
							}
							mu.Lock()
							if other, ok := held[c.Bucket]; ok {
								t.Errorf("%s: bucket %d claimed by %s while %s holds it", task, c.Bucket, owner, other)
							}
							held[c.Bucket] = owner
							mu.Unlock()
							if c, err = s.Renew(ctx, c, time.Minute); err != nil {
								t.Error(err)
							}
							mu.Lock()
							delete(held, c.Bucket)
							completed[c.Bucket]++
							mu.Unlock()
							if err := s.Complete(ctx, c); err != nil {
								t.Error(err)
							}
						}
					})
				}
				wg.Wait()
				for b := range buckets {
					if completed[b] != 1 {
						t.Errorf("%s: bucket %d completed %d times", task, b, completed[b])
					}
				}
				l, err := planner.List(ctx, task)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range l {
					if !c.Done || c.Token != 1 {
						t.Errorf("%s: bucket %+v, want done after one claim", task, c)
					}
				}
			}
		})
	}
}

// TestStore_LeaseExpiry: a worker that stops renewing loses its bucket
// once the lease expires; the next claim takes it with a new token, and
// the old claim can neither renew, complete nor release it. A released
// bucket is free at once.
func TestStore_LeaseExpiry(t *testing.T) {
	for name, raw := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, raw)
			if _, err := s.Plan(ctx, "t", 1); err != nil {
				t.Fatal(err)
			}
			dead, err := s.Claim(ctx, "t", "dead", 300*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Claim(ctx, "t", "live", time.Minute); !errors.Is(err, claims.ErrNoneFree) {
				t.Fatalf("claim of a leased bucket = %v, want ErrNoneFree", err)
			}
			live := claimOnceFree(t, s, "t", "live")
			if live.Bucket != dead.Bucket || live.Token != dead.Token+1 {
				t.Fatalf("taken over: %+v after %+v, want the same bucket with the next token", live, dead)
			}
			if _, err := s.Renew(ctx, dead, time.Minute); !errors.Is(err, claims.ErrLost) {
				t.Errorf("renew of a taken-over claim = %v, want ErrLost", err)
			}
			if err := s.Complete(ctx, dead); !errors.Is(err, claims.ErrLost) {
				t.Errorf("complete of a taken-over claim = %v, want ErrLost", err)
			}
			if err := s.Release(ctx, dead); !errors.Is(err, claims.ErrLost) {
				t.Errorf("release of a taken-over claim = %v, want ErrLost", err)
			}
			if err := s.Release(ctx, live); err != nil {
				t.Fatal(err)
			}
			again, err := s.Claim(ctx, "t", "other", time.Minute)
			if err != nil || again.Token != live.Token+1 {
				t.Fatalf("claim after release = %+v, %v", again, err)
			}
			if err := s.Complete(ctx, again); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Claim(ctx, "t", "late", time.Minute); !errors.Is(err, claims.ErrNoneFree) {
				t.Fatalf("claim of a done task = %v, want ErrNoneFree", err)
			}
			if err := s.Forget(ctx, "t"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Claim(ctx, "t", "w", time.Minute); !errors.Is(err, claims.ErrNotPlanned) {
				t.Fatalf("claim after forget = %v, want ErrNotPlanned", err)
			}
		})
	}
}

// TestStore_Processes: worker processes (this test binary re-run as a
// worker) race over one plan, one of them SIGKILLed while it holds a
// bucket: the survivors take its bucket over once its lease expires, and
// every bucket is completed exactly once.
func TestStore_Processes(t *testing.T) {
	const buckets = 40
	for name, raw := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			if _, err := open(t, raw).Plan(ctx, "procs", buckets); err != nil {
				t.Fatal(err)
			}
			start := func(owner string, hold bool) (*exec.Cmd, *bufio.Scanner) {
				cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWorker$")
				cmd.Env = append(os.Environ(), "WEIR_CLAIMS_WORKER="+raw, "WEIR_CLAIMS_OWNER="+owner)
				if hold {
					cmd.Env = append(cmd.Env, "WEIR_CLAIMS_HOLD=1")
				}
				out, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				return cmd, bufio.NewScanner(out)
			}
			// the victim claims one bucket and holds it until killed
			victim, vout := start("victim", true)
			if !vout.Scan() || !strings.HasPrefix(vout.Text(), "held ") {
				t.Fatalf("victim: %q", vout.Text())
			}
			victim.Process.Kill()
			victim.Wait()
			held, _ := strconv.Atoi(strings.TrimPrefix(vout.Text(), "held "))

			var mu sync.Mutex
			completed := map[int]int{}
			var wg sync.WaitGroup
			for w := range 3 {
				cmd, out := start(fmt.Sprintf("p%d", w), false)
				wg.Go(func() {
					for out.Scan() {
						if b, ok := strings.CutPrefix(out.Text(), "done "); ok {
							n, _ := strconv.Atoi(b)
							mu.Lock()
							completed[n]++
							mu.Unlock()
						}
					}
					if err := cmd.Wait(); err != nil {
						t.Errorf("worker: %v", err)
					}
				})
			}
			wg.Wait()
			for b := range buckets {
				if completed[b] != 1 {
					t.Errorf("bucket %d completed %d times", b, completed[b])
				}
			}
			l, err := open(t, raw).List(ctx, "procs")
			if err != nil {
				t.Fatal(err)
			}
			if c := l[held]; !c.Done || c.Token != 2 || c.Owner == "victim" {
				t.Errorf("the killed worker's bucket %+v, want done by a survivor after a second claim", c)
			}
		})
	}
}

// TestHelperWorker is a worker process of TestStore_Processes: it claims
// (with a 10 s lease; the victim's is 1 s) and completes buckets until none is free, waiting
// for leases held by others to expire, printing "done N" for each; with
// WEIR_CLAIMS_HOLD it claims one bucket, prints "held N" and waits to be
// killed.
func TestHelperWorker(t *testing.T) {
	raw := os.Getenv("WEIR_CLAIMS_WORKER")
	if raw == "" {
		return // not a worker process: nothing to do
	}
	ctx := context.Background()
	s, err := claims.Open(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	owner := os.Getenv("WEIR_CLAIMS_OWNER")
	if os.Getenv("WEIR_CLAIMS_HOLD") != "" {
		c, err := s.Claim(ctx, "procs", owner, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("held %d\n", c.Bucket)
		select {}
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		c, err := s.Claim(ctx, "procs", owner, 10*time.Second)
		if errors.Is(err, claims.ErrNoneFree) {
			l, err := s.List(ctx, "procs")
			if err != nil {
				t.Fatal(err)
			}
			open := false
			for _, b := range l {
				open = open || !b.Done
			}
			if !open {
				return
			}
			time.Sleep(100 * time.Millisecond) // a bucket is leased by another: wait for it
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Complete(ctx, c); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("done %d\n", c.Bucket)
	}
	t.Fatal("the task did not finish in 30 s")
}

// TestStore_TaskNames: tasks whose names are prefixes of each other, or
// spell one another escaped, keep their own buckets: planned, claimed,
// completed and forgotten apart.
func TestStore_TaskNames(t *testing.T) {
	names := []string{"a", "a/b", "ab", "a/", "a%2Fb", "a/b/c", "b"}
	for name, raw := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, raw)
			for i, task := range names {
				if n, err := s.Plan(ctx, task, i+1); err != nil || n != i+1 {
					t.Fatalf("plan %q = %d, %v; want %d", task, n, err, i+1)
				}
			}
			c, err := s.Claim(ctx, "a", "w", time.Minute) // a's one bucket
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Complete(ctx, c); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Claim(ctx, "a", "w", time.Minute); !errors.Is(err, claims.ErrNoneFree) {
				t.Fatalf("claim of done task a = %v, want ErrNoneFree", err)
			}
			if err := s.Forget(ctx, "a"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Claim(ctx, "a", "w", time.Minute); !errors.Is(err, claims.ErrNotPlanned) {
				t.Fatalf("claim of forgotten task a = %v, want ErrNotPlanned", err)
			}
			for i, task := range names[1:] {
				l, err := s.List(ctx, task)
				if err != nil || len(l) != i+2 {
					t.Fatalf("task %q after a was done and forgotten: %d buckets, %v; want %d", task, len(l), err, i+2)
				}
				for _, c := range l {
					if c.Task != task || c.Buckets != i+2 || c.Done || c.Token != 0 || c.Owner != "" {
						t.Errorf("task %q: bucket %+v, want its own and free", task, c)
					}
				}
			}
		})
	}
}

// TestStore_RenewTTL: Renew with another ttl than the claim's moves the
// lease's end: a claim shortened to 2 s is free after it, one lengthened
// from 2 s to a minute is still held.
func TestStore_RenewTTL(t *testing.T) {
	for name, raw := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, raw)
			if _, err := s.Plan(ctx, "t", 2); err != nil {
				t.Fatal(err)
			}
			longer, err := s.Claim(ctx, "t", "longer", 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			shorter, err := s.Claim(ctx, "t", "shorter", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if longer, err = s.Renew(ctx, longer, time.Minute); err != nil {
				t.Fatal(err)
			}
			if shorter, err = s.Renew(ctx, shorter, 2*time.Second); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			next := claimOnceFree(t, s, "t", "next")
			if next.Bucket != shorter.Bucket || next.Token != shorter.Token+1 {
				t.Fatalf("after the shortened lease: claimed %+v, want bucket %d", next, shorter.Bucket)
			}
			if time.Since(start) < time.Second {
				t.Errorf("the shortened lease ended after %v, want about 2 s", time.Since(start))
			}
			if _, err := s.Claim(ctx, "t", "late", time.Minute); !errors.Is(err, claims.ErrNoneFree) {
				t.Fatalf("claim while the lengthened lease runs = %v, want ErrNoneFree", err)
			}
			if _, err := s.Renew(ctx, shorter, time.Minute); !errors.Is(err, claims.ErrLost) {
				t.Errorf("renew of the taken-over claim = %v, want ErrLost", err)
			}
			if err := s.Complete(ctx, longer); err != nil {
				t.Errorf("complete of the lengthened claim: %v", err)
			}
		})
	}
}

// TestOpen_BadURL: a claim store URL that cannot name a store is bad
// input; an unreachable etcd is not, and no message shows its password.
func TestOpen_BadURL(t *testing.T) {
	ctx := context.Background()
	for _, raw := range []string{"etcd://", "etcd://u:s3cret@127.0.0.1", "etcd://u:s3cret@127.0.0.1:12379?tls=1", "nats://u:s3cret@h:1", "sqlite://"} {
		_, err := claims.Open(ctx, raw)
		if !errors.Is(err, routes.ErrBadInput) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%s) = %v, want bad input without the password", routes.Redact(raw), err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := claims.Open(cctx, "etcd://u:s3cret@127.0.0.1:1/p") // nothing listens on port 1
	t.Logf("unreachable: %v", err)
	if err == nil || errors.Is(err, routes.ErrBadInput) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Open of an unreachable etcd = %v, want a failure that is not bad input, without the password", err)
	}
}

// TestEtcd_KilledWorkerLeaseExpires: a worker process SIGKILLed while it
// holds a claim loses it by itself: nobody calls the store, and etcd
// deletes the claim's key when its lease (1 s asked, etcd's minimum
// granted) expires; the bucket is then free with the token of that claim.
func TestEtcd_KilledWorkerLeaseExpires(t *testing.T) {
	raw := claimstest.EtcdURL(t)
	cli, prefix := claimstest.EtcdClient(t, raw)
	ctx := routestest.Context(t, time.Minute)
	s := open(t, raw)
	if _, err := s.Plan(ctx, "procs", 2); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWorker$")
	cmd.Env = append(os.Environ(), "WEIR_CLAIMS_WORKER="+raw, "WEIR_CLAIMS_OWNER=victim", "WEIR_CLAIMS_HOLD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "held 0" {
		cmd.Process.Kill()
		t.Fatalf("victim: %q, want held 0", sc.Text())
	}
	keys, err := cli.Get(ctx, prefix+"/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var lease clientv3.LeaseID
	for _, kv := range keys.Kvs {
		if kv.Lease != 0 {
			lease = clientv3.LeaseID(kv.Lease)
		}
	}
	if lease == 0 {
		t.Fatalf("no key under %s is attached to a lease: %v", prefix, keys.Kvs)
	}
	watch := cli.Watch(ctx, prefix+"/", clientv3.WithPrefix(), clientv3.WithRev(keys.Header.Revision+1))
	cmd.Process.Kill()
	cmd.Wait()
	killed := time.Now()
	select {
	case w := <-watch:
		if w.Err() != nil || len(w.Events) != 1 || w.Events[0].Type != clientv3.EventTypeDelete {
			t.Fatalf("after the kill etcd did %+v (%v), want the claim's key deleted", w.Events, w.Err())
		}
	case <-ctx.Done():
		t.Fatal("the killed worker's claim was not deleted within a minute")
	}
	t.Logf("claim deleted %v after the kill", time.Since(killed))
	if ttl, err := cli.TimeToLive(ctx, lease); err != nil || ttl.TTL != -1 {
		t.Errorf("the killed worker's lease: %+v, %v; want expired", ttl, err)
	}
	l, err := s.List(ctx, "procs")
	if err != nil {
		t.Fatal(err)
	}
	if c := l[0]; c.Owner != "" || c.Token != 1 || c.Done || !c.Expires.IsZero() {
		t.Errorf("the killed worker's bucket %+v, want free after one claim", c)
	}
}
