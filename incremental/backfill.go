package incremental

import (
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"strconv"
	"strings"

	"github.com/weirhq/weir/routes"
)

// A backfill shares one transfer's window between worker processes
// (docs/workers.md). Its plan is committed into the destination as the
// table's own state (Position = Plan.Encode(), Watermark still the offset
// the plan starts after), so an ordinary run of the task sees it and waits
// (Watermark refuses the window with routes.ErrLocked). Bucket i's
// progress is committed under BucketKey(sourceID, i): Watermark the cursor
// value it has consumed through, Position "backfill=<plan id>". When every
// bucket reached its end the table's state becomes Watermark = Head with
// no plan: the task continues from the head like any append or merge.

// ErrBackfill: an ordinary run found a backfill plan under way in the
// table's state (with routes.ErrLocked: exit 75).
var ErrBackfill = errors.New("a backfill is under way")

// BackfillPrefix starts the Position of a table's state while a backfill
// plan is under way.
const BackfillPrefix = "backfill="

// Plan is a backfill's plan: the window (After, Head] of an integer cursor
// cut into Buckets contiguous ranges of equal width, from Lo.
type Plan struct {
	ID      string `json:"id"`    // the planning run's id
	After   string `json:"after"` // the committed offset the window starts after ("": the start of the table)
	Lo      string `json:"lo"`    // where the cuts start: After, or the cursor's minimum - 1 when After is ""
	Head    string `json:"head"`  // the cursor's maximum when planned, inclusive
	Buckets int    `json:"buckets"`
}

// Encode renders the plan as a State.Position.
func (p Plan) Encode() string {
	q := url.Values{"after": {p.After}, "lo": {p.Lo}, "head": {p.Head}, "buckets": {strconv.Itoa(p.Buckets)}}
	return BackfillPrefix + url.QueryEscape(p.ID) + "&" + q.Encode()
}

// BucketPosition is the Position of a bucket's progress under this plan,
// committed by the holder of claim token: a worker that takes a bucket
// over first commits its own token (a fencing token in the sink), so the
// commits of a worker whose claim was taken over are refused.
func (p Plan) BucketPosition(token int64) string {
	return BackfillPrefix + url.QueryEscape(p.ID) + "&token=" + strconv.FormatInt(token, 10)
}

// BucketToken reads a bucket's Position: the plan id and the claim token
// that committed it; ok is false for another plan's or no progress.
func (p Plan) BucketToken(position string) (token int64, ok bool) {
	q, err := url.ParseQuery(position)
	if err != nil || !strings.HasPrefix(position, BackfillPrefix) || q.Get("backfill") != p.ID {
		return 0, false
	}
	t, err := strconv.ParseInt(q.Get("token"), 10, 64)
	return t, err == nil
}

// Progress is bucket i's progress: the cursor value through which its
// rows are in the sink, from its state row st (nil: none yet); a row of
// another plan's, or none, is the bucket's start.
func (p Plan) Progress(i int, st *routes.State) string {
	if st != nil {
		if _, ok := p.BucketToken(st.Position); ok {
			return st.Watermark
		}
	}
	after, _ := p.Bucket(i)
	return after
}

// DecodePlan parses a State.Position; ok is false when it holds no plan.
func DecodePlan(position string) (Plan, bool, error) {
	if !strings.HasPrefix(position, BackfillPrefix) {
		return Plan{}, false, nil
	}
	q, err := url.ParseQuery(position)
	if err != nil {
		return Plan{}, false, fmt.Errorf("backfill plan %q: %w", position, err)
	}
	p := Plan{ID: q.Get("backfill"), After: q.Get("after"), Lo: q.Get("lo"), Head: q.Get("head")}
	p.Buckets, err = strconv.Atoi(q.Get("buckets"))
	if err != nil || p.Buckets < 1 || p.ID == "" {
		return Plan{}, false, fmt.Errorf("backfill plan %q: no id or bucket count", position)
	}
	for _, v := range []string{p.Lo, p.Head} {
		if _, ok := new(big.Int).SetString(v, 10); !ok {
			return Plan{}, false, fmt.Errorf("backfill plan %q: %q is not an integer", position, v)
		}
	}
	return p, true, nil
}

// Bucket returns bucket i's window (after, until]: bucket 0 starts after
// the plan's After, the last ends at Head, and the cuts between are
// Lo + (Head-Lo)·i/Buckets. A bucket with after == until is empty. With no
// After, a cut at Lo (the cursor's minimum - 1, which may be below what
// the cursor's type holds: -2^63 - 1) is "" (the start), the same rows.
func (p Plan) Bucket(i int) (after, until string) {
	lo, _ := new(big.Int).SetString(p.Lo, 10)
	hi, _ := new(big.Int).SetString(p.Head, 10)
	cut := func(k int) string {
		w := new(big.Int).Sub(hi, lo)
		w.Mul(w, big.NewInt(int64(k)))
		w.Quo(w, big.NewInt(int64(p.Buckets)))
		return w.Add(w, lo).String()
	}
	after, until = cut(i), cut(i+1)
	if i == 0 {
		after = p.After
	}
	if i == p.Buckets-1 {
		until = p.Head
	}
	if p.After == "" {
		after, until = startAtLo(after, p.Lo), startAtLo(until, p.Lo)
	}
	return after, until
}

func startAtLo(cut, lo string) string {
	if cut == lo {
		return ""
	}
	return cut
}

// BucketKey is the state key of bucket i's progress: the table's source
// identity (routes.TableInfo.SourceID) + "#bucket/i".
func BucketKey(sourceID string, i int) string {
	return sourceID + bucketSep + strconv.Itoa(i)
}

const bucketSep = "#bucket/"

// backfillUnderWay refuses an ordinary incremental run while a plan is in
// the table's state: its rows are the workers' to copy.
func backfillUnderWay(dest routes.TableRef, st routes.State) error {
	p, ok, err := DecodePlan(st.Position)
	if err != nil || !ok {
		return err
	}
	return fmt.Errorf("%w: %s: %w (plan %s, %d buckets, offsets %s to %s); its workers finish it (weir worker --task), then runs continue from its head",
		routes.ErrLocked, dest, ErrBackfill, p.ID, p.Buckets, OrStart(p.After), p.Head)
}

// OrStart names an offset for a message: "the start" when there is none.
func OrStart(offset string) string {
	if offset == "" {
		return "the start"
	}
	return offset
}

// Settle is how far a reader of a backfill's destination table may go by
// the plan's cursor while the plan is under way (Settled).
type Settle struct {
	Offset string // every row at or below it is committed, and no commit of the plan brings another ("": the start, nothing is)
	Plan   Plan   // the plan that bounds it
	Source string // the plan's state key (its transfer's source identity)
	Bucket int    // the plan's lowest unfinished bucket, -1 when every bucket is at its end
}

// Settled reads a destination table's states (every state saved beside
// it, one version of them: routes.StateLister) for backfill plans under
// way, and returns the lowest offset they settle; ok is false when no plan
// is under way. A plan's buckets commit out of cursor order, each chunk
// with its bucket's progress in one commit, and bucket i's window is
// (after_i, until_i], contiguous and ascending: at the progress of the
// lowest bucket that is not at its end every row below is committed (the
// buckets before it are whole), and no later commit of the plan brings a
// row at or below it (a bucket commits only past its progress; ordinary
// runs wait for the plan, and begin past its head). With every bucket at
// its end the offset is the plan's head. A plan of another cursor than
// cursor settles nothing a reader by cursor can use: routes.ErrLocked
// naming it (the reader waits for the plan to finish).
func Settled(table routes.TableRef, states []routes.State, cursor string) (Settle, bool, error) {
	byKey := make(map[string]routes.State, len(states))
	for _, st := range states {
		byKey[st.SourceID] = st
	}
	var low Settle
	found := false
	for _, st := range states {
		if strings.Contains(st.SourceID, bucketSep) {
			continue // a bucket's progress, read with its plan below
		}
		p, ok, err := DecodePlan(st.Position)
		if err != nil {
			return Settle{}, false, fmt.Errorf("state of %s: %w", table, err)
		}
		if !ok {
			continue
		}
		if st.Cursor != cursor {
			return Settle{}, false, fmt.Errorf("%w: %s: %w (plan %s, %d buckets) by cursor %s, committing rows out of %s order; read by %s, nothing past the committed offset is known to be whole until the plan is finished (weir status --claims shows it)",
				routes.ErrLocked, table, ErrBackfill, p.ID, p.Buckets, st.Cursor, st.Cursor, cursor)
		}
		s := Settle{Offset: p.Head, Plan: p, Source: st.SourceID, Bucket: -1}
		for i := range p.Buckets {
			var bs *routes.State
			if b, ok := byKey[BucketKey(st.SourceID, i)]; ok {
				bs = &b
			}
			if _, until := p.Bucket(i); p.Progress(i, bs) != until {
				s.Offset, s.Bucket = p.Progress(i, bs), i
				break
			}
		}
		if !found || Compare(s.Offset, low.Offset) < 0 {
			low, found = s, true
		}
	}
	return low, found, nil
}
