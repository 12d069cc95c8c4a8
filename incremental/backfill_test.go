package incremental

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
)

// TestPlan_Buckets: the buckets of a plan are contiguous, cover exactly
// (After, Head] — bucket 0 from After itself, "" included — and survive
// their encoding; a bucket's progress names its plan and token.
func TestPlan_Buckets(t *testing.T) {
	for _, p := range []Plan{
		{ID: "a1", After: "", Lo: "0", Head: "2000000", Buckets: 4},
		{ID: "a2", After: "17", Lo: "17", Head: "20", Buckets: 8}, // more buckets than keys: some empty
		{ID: "a3", After: "-5", Lo: "-5", Head: "9223372036854775807", Buckets: 3},
		{ID: "a/4&x", After: "", Lo: "999", Head: "1000", Buckets: 1},
	} {
		got, ok, err := DecodePlan(p.Encode())
		if err != nil || !ok || got != p {
			t.Fatalf("decode(encode(%+v)) = %+v, %v, %v", p, got, ok, err)
		}
		prev := p.After
		for i := range p.Buckets {
			after, until := p.Bucket(i)
			if after != prev {
				t.Errorf("%+v: bucket %d starts after %q, want %q (contiguous)", p, i, after, prev)
			}
			if after != "" && Compare(until, after) < 0 {
				t.Errorf("%+v: bucket %d = (%s, %s] runs backwards", p, i, after, until)
			}
			prev = until
		}
		if prev != p.Head {
			t.Errorf("%+v: the last bucket ends at %s, want the head", p, prev)
		}
		pos := p.BucketPosition(7)
		if tok, ok := p.BucketToken(pos); !ok || tok != 7 {
			t.Errorf("%+v: token of %q = %d, %v", p, pos, tok, ok)
		}
		if _, ok := (Plan{ID: "other"}).BucketToken(pos); ok {
			t.Errorf("another plan's progress %q read as this one's", pos)
		}
	}
	// equal width: 2M keys in 4 buckets of 500k
	p := Plan{ID: "w", Lo: "0", Head: "2000000", Buckets: 4}
	for i := range 4 {
		after, until := p.Bucket(i)
		a, _ := new(big.Int).SetString(orZero(after), 10)
		u, _ := new(big.Int).SetString(until, 10)
		if new(big.Int).Sub(u, a).Int64() != 500000 {
			t.Errorf("bucket %d = (%s, %s], want 500000 keys wide", i, after, until)
		}
	}
	for _, bad := range []string{"backfill=&buckets=2&lo=0&head=1", "backfill=x&buckets=0&lo=0&head=1", "backfill=x&buckets=2&lo=a&head=1"} {
		if _, _, err := DecodePlan(bad); err == nil {
			t.Errorf("DecodePlan(%q) accepted", bad)
		}
	}
	if _, ok, err := DecodePlan("rev=abc"); ok || err != nil {
		t.Errorf("a position without a plan: %v, %v", ok, err)
	}
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// TestBackfillUnderWay: an ordinary append/merge run is refused as locked
// (exit 75) while the table's state holds a plan, naming it.
func TestBackfillUnderWay(t *testing.T) {
	p := Plan{ID: "p9", After: "10", Lo: "10", Head: "90", Buckets: 2}
	dest := routes.TableRef{Schema: "s", Name: "t"}
	err := backfillUnderWay(dest, routes.State{Watermark: "10", Position: p.Encode()})
	if !errors.Is(err, routes.ErrLocked) || !errors.Is(err, ErrBackfill) || !strings.Contains(err.Error(), "plan p9, 2 buckets, offsets 10 to 90") {
		t.Fatalf("run during a backfill = %v, want ErrLocked naming the plan", err)
	}
	if err := backfillUnderWay(dest, routes.State{Watermark: "90"}); err != nil {
		t.Fatalf("run after it = %v", err)
	}
}

// TestSettled: a reader of a backfill's destination may go up to the
// progress of the plan's lowest unfinished bucket (the plan's head once
// every bucket is at its end; the start while bucket 0 has none); a
// bucket's progress under another plan does not count; no plan settles
// nothing; a plan of another cursor is routes.ErrLocked naming it.
func TestSettled(t *testing.T) {
	ref := routes.TableRef{Schema: "s", Name: "out"}
	p := Plan{ID: "p1", After: "", Lo: "0", Head: "400", Buckets: 4} // buckets (,100] (100,200] (200,300] (300,400]
	main := routes.State{SourceID: "src", Cursor: "id", Watermark: "", Position: p.Encode()}
	bucket := func(i int, prog string, plan Plan) routes.State {
		return routes.State{SourceID: BucketKey("src", i), Cursor: "id", Watermark: prog, Position: plan.BucketPosition(1)}
	}
	other := Plan{ID: "old", After: "", Lo: "0", Head: "400", Buckets: 4}
	for _, c := range []struct {
		name   string
		states []routes.State
		offset string
		bucket int
		ok     bool
	}{
		{"no state", nil, "", 0, false},
		{"no plan", []routes.State{{SourceID: "src", Cursor: "id", Watermark: "400"}}, "", 0, false},
		{"nothing committed", []routes.State{main}, "", 0, true},
		{"later buckets ahead", []routes.State{main, bucket(1, "150", p), bucket(3, "400", p)}, "", 0, true},
		{"bucket 0 part way", []routes.State{main, bucket(0, "40", p), bucket(2, "300", p)}, "40", 0, true},
		{"bucket 0 done, 1 not begun", []routes.State{main, bucket(0, "100", p), bucket(2, "250", p)}, "100", 1, true},
		{"another plan's progress", []routes.State{main, bucket(0, "100", p), bucket(1, "200", other)}, "100", 1, true},
		{"every bucket at its end", []routes.State{main, bucket(0, "100", p), bucket(1, "200", p), bucket(2, "300", p), bucket(3, "400", p)}, "400", -1, true},
	} {
		s, ok, err := Settled(ref, c.states, "id")
		if err != nil || ok != c.ok || (ok && (s.Offset != c.offset || s.Bucket != c.bucket || s.Plan.ID != "p1")) {
			t.Errorf("%s: Settled = %+v, %v, %v; want offset %q bucket %d, %v", c.name, s, ok, err, c.offset, c.bucket, c.ok)
		}
	}
	_, _, err := Settled(ref, []routes.State{main}, "n")
	if !errors.Is(err, routes.ErrLocked) || !strings.Contains(err.Error(), "s.out") || !strings.Contains(err.Error(), "plan p1") {
		t.Errorf("a plan by id read by n: %v; want ErrLocked naming the table and the plan", err)
	}
}
