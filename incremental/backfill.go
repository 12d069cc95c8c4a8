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
	return sourceID + "#bucket/" + strconv.Itoa(i)
}

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
