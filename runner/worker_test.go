package runner

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/claims"
	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

const zombieRows = 2000

// zombieSinks are the connections the zombie tests write into: the test
// PostgreSQL, and an Iceberg SQL catalog (SQLite, file warehouse).
var zombieSinks = []string{"pg", "lake"}

const lakeURL = "iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake"

// sinkKeys counts the rows of table in sink: rows, distinct ids, sum of ids.
func sinkKeys(t *testing.T, ctx context.Context, d *pgDAG, r *Runner, sink, table string) (n, distinct, sum int64) {
	t.Helper()
	if sink == "pg" {
		if err := d.fx.Pool.QueryRow(ctx, "SELECT count(*), count(DISTINCT id), sum(id) FROM "+table).Scan(&n, &distinct, &sum); err != nil {
			t.Fatal(err)
		}
		return n, distinct, sum
	}
	tbl, err := lakeEndpoint(t, r).LoadTable(ctx, lakeRef(table))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[int64]bool{}
	for _, id := range icebergIDs(t, ctx, tbl) {
		n, sum, ids[id] = n+1, sum+id, true
	}
	return n, int64(len(ids)), sum
}

// zombieDAG is a source of zombieRows rows and one append task per round,
// each into its own table, and the two claim stores.
func zombieDAG(t *testing.T, rounds int, sink string) (*pgDAG, map[string]string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("version: 1\nconnections:\n  pg: ${WEIR_TEST_PG}\n  lake: " + lakeURL + "\ntasks:\n")
	for i := range rounds {
		fmt.Fprintf(&b, "  z%d:\n    transfer: {from: pg, table: S.ev, to: %s, dest_table: S.out%d, mode: append}\n", i, sink, i)
	}
	d := newPGDAG(t, b.String())
	d.fx.Exec(t, testContext(t), "CREATE TABLE "+d.s+".ev (id bigint PRIMARY KEY, v text)",
		fmt.Sprintf("INSERT INTO %s.ev SELECT g, 'v' || g FROM generate_series(1, %d) g", d.s, zombieRows))
	u, err := url.Parse(d.fx.URL())
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("schema", d.s)
	u.RawQuery = q.Encode()
	return d, map[string]string{"postgres": u.String(), "sqlite": "sqlite://" + filepath.Join(t.TempDir(), "claims.db")}
}

// zombieRound plans task in one bucket, and has a zombie worker claim it
// with a lease that ends at once, take it over in the sink and commit up
// to id 500; then the live worker claims it (the next token).
type zombieRound struct {
	task         string
	p            incremental.Plan
	zombie, live *splitTask
	rl           *Runner // the live worker's
	cz, cl       claims.Claim
	prog         string
	prev         *routes.State
}

func startZombieRound(t *testing.T, ctx context.Context, path, task string, store claims.Store) *zombieRound {
	t.Helper()
	open := func() *Runner {
		r, err := Load(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	rz, rl := open(), open()
	res, err := rz.Backfill(ctx, task, store, 1)
	if err != nil {
		t.Fatal(err)
	}
	z := &zombieRound{task: task, p: res.Plan, rl: rl}
	if z.zombie, err = rz.split(ctx, task); err != nil {
		t.Fatal(err)
	}
	if z.live, err = rl.split(ctx, task); err != nil {
		t.Fatal(err)
	}
	ct := claimsTask(task, z.p)
	if z.cz, err = store.Claim(ctx, ct, "zombie", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if z.prog, z.prev, err = z.zombie.takeOver(ctx, z.cz, z.p); err != nil {
		t.Fatal(err)
	}
	return z
}

// claimLive claims the bucket for the live worker as soon as the zombie's
// lease has ended (no sleep: claims until one succeeds).
func (z *zombieRound) claimLive(t *testing.T, ctx context.Context, store claims.Store) {
	for {
		c, err := store.Claim(ctx, claimsTask(z.task, z.p), "live", time.Minute)
		if err == nil {
			z.cl = c
			return
		}
		if !errors.Is(err, claims.ErrNoneFree) {
			t.Error(err)
			return
		}
	}
}

// checkSink: every source row once in the round's table, and the task's
// offset the head.
func checkSink(t *testing.T, ctx context.Context, d *pgDAG, sink string, round int, r *Runner, task string, store claims.Store) {
	t.Helper()
	res, err := r.Work(ctx, task, store, WorkOptions{Owner: "finisher", Lease: time.Minute})
	if err != nil || !res.CaughtUp || res.Offset != fmt.Sprint(zombieRows) {
		t.Fatalf("round %d: finish = %+v, %v; want caught up at %d", round, res, err, zombieRows)
	}
	n, distinct, sum := sinkKeys(t, ctx, d, r, sink, fmt.Sprintf("%s.out%d", d.s, round))
	if n != zombieRows || distinct != zombieRows || sum != zombieRows*(zombieRows+1)/2 {
		t.Fatalf("round %d: %d rows, %d distinct, sum %d; want each of %d rows once", round, n, distinct, sum, zombieRows)
	}
}

// TestWork_ZombieRefused: round after round, with no pauses, a zombie
// worker whose lease ended commits after its bucket was claimed again and
// taken over in the sink: its commit is refused by the compare-and-set in
// the sink's transaction (ErrFenced: it stops, errLost), and so is its
// second take-over; the live worker finishes the bucket from the zombie's
// last commit and the sink holds every row once. Both claim stores.
func TestWork_ZombieRefused(t *testing.T) {
	const rounds = 10
	for _, sink := range zombieSinks {
		t.Run(sink, func(t *testing.T) { zombieRefused(t, sink, rounds) })
	}
}

func zombieRefused(t *testing.T, sink string, rounds int) {
	d, stores := zombieDAG(t, 2*rounds, sink)
	ctx := testContext(t)
	i := 0
	for name, raw := range stores {
		t.Run(name, func(t *testing.T) {
			store, err := claims.Open(ctx, raw)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			for range rounds {
				round := i
				i++
				task := fmt.Sprintf("z%d", round)
				z := startZombieRound(t, ctx, d.path, task, store)
				if err := z.zombie.copyBucket(ctx, z.cz, z.p, z.prog, z.prev, "500", 100, &BackfillResult{}); err != nil {
					t.Fatal(err)
				}
				z.prev = &routes.State{Watermark: "500", Position: z.p.BucketPosition(z.cz.Token)}
				z.claimLive(t, ctx, store)
				prog, prev, err := z.live.takeOver(ctx, z.cl, z.p)
				if err != nil || prog != "500" {
					t.Fatalf("round %d: live take-over = %q, %v; want the zombie's last commit, 500", round, prog, err)
				}
				err = z.zombie.copyBucket(ctx, z.cz, z.p, "500", z.prev, "1000", 100, &BackfillResult{})
				if !errors.Is(err, errLost) || !errors.Is(err, routes.ErrFenced) {
					t.Fatalf("round %d: the zombie's commit after the take-over = %v, want refused (ErrFenced)", round, err)
				}
				if _, _, err := z.zombie.takeOver(ctx, z.cz, z.p); !errors.Is(err, errLost) {
					t.Fatalf("round %d: the zombie's second take-over = %v, want errLost", round, err)
				}
				_, until := z.p.Bucket(0)
				if err := z.live.copyBucket(ctx, z.cl, z.p, prog, prev, until, 250, &BackfillResult{}); err != nil {
					t.Fatalf("round %d: live: %v", round, err)
				}
				if err := store.Complete(ctx, z.cl); err != nil {
					t.Fatal(err)
				}
				checkSink(t, ctx, d, sink, round, z.rl, task, store)
			}
		})
	}
}

// TestWork_ZombieRace: round after round, a zombie worker (lease ended)
// and the worker that claims its bucket next copy it at the same time,
// with no pauses: whatever the interleaving, the sink holds every row
// once, the bucket ends committed under the live worker's token, and the
// zombie either stopped (errLost: a commit or take-over refused) or had
// finished before the take-over. Both claim stores.
func TestWork_ZombieRace(t *testing.T) {
	const rounds = 10
	for _, sink := range zombieSinks {
		t.Run(sink, func(t *testing.T) { zombieRace(t, sink, rounds) })
	}
}

func zombieRace(t *testing.T, sink string, rounds int) {
	d, stores := zombieDAG(t, 2*rounds, sink)
	ctx := testContext(t)
	i := 0
	refused := 0
	for name, raw := range stores {
		t.Run(name, func(t *testing.T) {
			store, err := claims.Open(ctx, raw)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			for range rounds {
				round := i
				i++
				task := fmt.Sprintf("z%d", round)
				z := startZombieRound(t, ctx, d.path, task, store)
				_, until := z.p.Bucket(0)
				var zerr, lerr error
				var wg sync.WaitGroup
				wg.Go(func() { zerr = z.zombie.copyBucket(ctx, z.cz, z.p, z.prog, z.prev, until, 100, &BackfillResult{}) })
				wg.Go(func() {
					z.claimLive(t, ctx, store)
					prog, prev, err := z.live.takeOver(ctx, z.cl, z.p)
					if err != nil {
						lerr = err
						return
					}
					lerr = z.live.copyBucket(ctx, z.cl, z.p, prog, prev, until, 100, &BackfillResult{})
				})
				wg.Wait()
				if lerr != nil {
					t.Fatalf("round %d: live: %v", round, lerr)
				}
				if zerr != nil && !errors.Is(zerr, errLost) {
					t.Fatalf("round %d: zombie: %v", round, zerr)
				}
				if errors.Is(zerr, routes.ErrFenced) {
					refused++
				}
				st, err := z.live.state(ctx, incremental.BucketKey(z.live.info.SourceID, 0))
				if tok, ok := z.p.BucketToken(st.Position); err != nil || !ok || tok != z.cl.Token || st.Watermark != until {
					t.Fatalf("round %d: bucket state %+v, %v; want at %s under the live token %d", round, st, err, until, z.cl.Token)
				}
				if err := store.Complete(ctx, z.cl); err != nil {
					t.Fatal(err)
				}
				checkSink(t, ctx, d, sink, round, z.rl, task, store)
			}
		})
	}
	t.Logf("%d of %d zombies had a chunk commit refused by the compare-and-set (the others were refused at their take-over, or finished before it)", refused, 2*rounds)
}

// icebergIDs reads column id (bigint) of tbl's current snapshot.
func icebergIDs(t *testing.T, ctx context.Context, tbl *table.Table) []int64 {
	t.Helper()
	at, err := tbl.Scan(table.WithSelectedFields("id")).ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	var ids []int64
	for _, c := range at.Column(0).Data().Chunks() {
		a := c.(*array.Int64)
		for i := range a.Len() {
			ids = append(ids, a.Value(i))
		}
	}
	return ids
}
