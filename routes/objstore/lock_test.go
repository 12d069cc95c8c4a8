package objstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/objstore"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/routestest"
)

// eachKind runs fn once per store, Parquet only.
func eachKind(t *testing.T, query []string, fn func(t *testing.T, f *objstoretest.Fixture)) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			fn(t, s.new(t, query...))
		})
	}
}

func prepare(t *testing.T, ctx context.Context, f *objstoretest.Fixture, table string, mode routes.Mode) (routes.Stage, error) {
	t.Helper()
	ep, err := routes.OpenDestination(ctx, f.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close() })
	return ep.Prepare(ctx, routestest.MemInfo(table), routes.WriteOptions{Mode: mode, RunID: routes.NewRunID()})
}

func TestLease_SecondPrepareLocked(t *testing.T) {
	eachKind(t, nil, func(t *testing.T, f *objstoretest.Fixture) {
		ctx := testContext(t)
		first, err := prepare(t, ctx, f, "t", routes.ModeReplace)
		if err != nil {
			t.Fatal(err)
		}
		lock := readLock(t, ctx, f, "t")
		_, err = prepare(t, ctx, f, "t", routes.ModeAppend)
		var le *routes.LockedError
		if !errors.Is(err, routes.ErrLocked) || !errors.As(err, &le) || le.RunID != lock.RunID || le.Table != "t" {
			t.Fatalf("second prepare: got %v, want a LockedError naming run %s", err, lock.RunID)
		}
		if err := first.Abort(ctx); err != nil {
			t.Fatal(err)
		}
		again, err := prepare(t, ctx, f, "t", routes.ModeReplace)
		if err != nil {
			t.Fatalf("prepare after the holder aborted: %v", err)
		}
		again.Abort(ctx)
		if keys := f.Keys(ctx, "t"); len(keys) > 0 {
			t.Fatalf("abort left %v", keys)
		}
	})
}

type lockDoc struct {
	RunID   string    `json:"run_id"`
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
}

func readLock(t *testing.T, ctx context.Context, f *objstoretest.Fixture, table string) lockDoc {
	t.Helper()
	ep := f.Endpoint(t, ctx)
	var doc lockDoc
	keys, _ := ep.Objects(ctx, routes.TableRef{Name: table})
	for _, k := range keys {
		if strings.HasSuffix(k, objstore.LockName) {
			b := f.Get(t, k)
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatalf("lock: %v", err)
			}
			return doc
		}
	}
	t.Fatalf("no lock under %s: %v", table, keys)
	return doc
}

func TestLease_ExpiredDoesNotBlock(t *testing.T) {
	eachKind(t, nil, func(t *testing.T, f *objstoretest.Fixture) {
		ctx := testContext(t)
		putLock(t, f, "t", "deadbeef", time.Now().Add(-time.Minute))
		st, err := prepare(t, ctx, f, "t", routes.ModeReplace)
		if err != nil {
			t.Fatalf("prepare over an expired lease: %v", err)
		}
		defer st.Abort(ctx)
		if lock := readLock(t, ctx, f, "t"); lock.RunID == "deadbeef" {
			t.Fatal("the expired lease was not taken over")
		}
	})
}

func TestLease_LiveForeignLeaseBlocks(t *testing.T) {
	eachKind(t, nil, func(t *testing.T, f *objstoretest.Fixture) {
		ctx := testContext(t)
		putLock(t, f, "t", "cafe0001", time.Now().Add(time.Hour))
		_, err := prepare(t, ctx, f, "t", routes.ModeReplace)
		var le *routes.LockedError
		if !errors.As(err, &le) || le.RunID != "cafe0001" || le.Since.IsZero() {
			t.Fatalf("got %v, want a LockedError naming run cafe0001 and since when", err)
		}
	})
}

func putLock(t *testing.T, f *objstoretest.Fixture, table, runID string, expires time.Time) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"run_id": runID, "since": expires.Add(-time.Hour), "expires": expires})
	f.Put(t, table+"/"+objstore.LockName, b)
}

// The refresh goroutine keeps a 1s lease alive across several seconds.
func TestLease_Refreshed(t *testing.T) {
	eachKind(t, []string{"lease=1s"}, func(t *testing.T, f *objstoretest.Fixture) {
		ctx := testContext(t)
		st, err := prepare(t, ctx, f, "t", routes.ModeReplace)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Abort(ctx)
		time.Sleep(2500 * time.Millisecond)
		if _, err := prepare(t, ctx, f, "t", routes.ModeReplace); !errors.Is(err, routes.ErrLocked) {
			t.Fatalf("after 2.5 s of a 1 s lease: got %v, want ErrLocked", err)
		}
	})
}

// A run whose lease another run took over cannot commit.
func TestLease_LostLeaseCannotCommit(t *testing.T) {
	eachKind(t, []string{"lease=1s"}, func(t *testing.T, f *objstoretest.Fixture) {
		ctx := testContext(t)
		mustCopy(t, ctx, f, "t", routestest.Rows(1, 10), routes.ModeReplace)
		st, err := prepare(t, ctx, f, "t", routes.ModeReplace)
		if err != nil {
			t.Fatal(err)
		}
		putLock(t, f, "t", "0the0ther", time.Now().Add(time.Hour))
		time.Sleep(1500 * time.Millisecond) // a refresh finds the lock replaced
		err = st.Commit(ctx, routes.State{})
		if err == nil || !strings.Contains(err.Error(), "lost the lock") {
			t.Fatalf("commit after losing the lease: got %v", err)
		}
		st.Abort(ctx)
		expectRows(t, ctx, f, "t", routestest.Rows(1, 10))
		if lock := readLock(t, ctx, f, "t"); lock.RunID != "0the0ther" {
			t.Fatalf("abort removed the other run's lock (now %q)", lock.RunID)
		}
	})
}

// The manifest is written with a compare-and-swap: a table changed behind a
// run's back (its lease expired meanwhile) is never overwritten, and the
// files the run had already moved into the table's folder are taken out.
func TestCommit_ManifestChangedMeanwhile(t *testing.T) {
	eachKind(t, nil, func(t *testing.T, f *objstoretest.Fixture) {
		ctx := testContext(t)
		mustCopy(t, ctx, f, "t", routestest.Rows(1, 10), routes.ModeReplace)
		st, err := prepare(t, ctx, f, "t", routes.ModeReplace)
		if err != nil {
			t.Fatal(err)
		}
		src := &routestest.MemSource{Table: routestest.MemInfo("t"), Rows: routestest.Rows(1, 300)}
		ranges, _ := src.Plan(ctx, src.Table, routes.PlanOptions{Pipes: 1})
		s, _ := src.Read(ctx, ranges[0], routes.ReadOptions{})
		if _, err := st.Write(ctx, s); err != nil {
			t.Fatal(err)
		}
		s.Release()
		key := "t/" + objstore.ManifestName
		old := f.Get(t, key)
		f.Put(t, key, []byte(strings.Replace(string(old), `"mode"`, `"note": "rewritten", "mode"`, 1)))
		if err := st.Commit(ctx, routes.State{}); err == nil || !strings.Contains(err.Error(), "another run committed") {
			t.Fatalf("commit over a changed manifest: got %v", err)
		}
		if err := st.Abort(ctx); err != nil {
			t.Fatal(err)
		}
		expectRows(t, ctx, f, "t", routestest.Rows(1, 10))
		if left := f.Staging(t, ctx, "t"); len(left) > 0 {
			t.Fatalf("the failed run left %v", left)
		}
	})
}
