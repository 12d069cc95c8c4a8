package incremental

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/weirhq/weir/routes"
)

// Lag is how far a consumer is behind its table's head.
type Lag struct {
	Position string `json:"position"`
	Head     string `json:"head"`
	Behind   int64  `json:"behind"` // in Unit
	Unit     string `json:"unit"`   // UnitRows, UnitKeyDistance, UnitSeconds or UnitSnapshots; "bytes" and "events" elsewhere
	Known    bool   `json:"known"`  // false when Behind could not be computed
}

// The units of a Lag. Rows are counted (or the row estimate from the start
// of the table); the others are distances where the source cannot count:
// between integer cursor values, time cursor values, or snapshot sequence
// numbers (an Iceberg offset whose snapshots do not say the rows they added).
const (
	UnitRows        = "rows"
	UnitKeyDistance = "key distance"
	UnitSeconds     = "seconds"
	UnitSnapshots   = "snapshots"
)

// Additive reports a unit whose lags add up across sources (rows, bytes,
// events); a distance in one table's keys, seconds or snapshots does not
// add to another's.
func Additive(unit string) bool {
	switch unit {
	case UnitKeyDistance, UnitSeconds, UnitSnapshots:
		return false
	}
	return true
}

// Lag compares the position with the head. Where the source counts the
// rows of a cursor window (routes.RangeCounter: PostgreSQL's count(*),
// Iceberg's snapshot summaries) it is the rows past the position; else the
// difference of integer offsets, seconds for time cursors, the table's
// row estimate from the start of the table.
func (c *Consumer) Lag(ctx context.Context) (Lag, error) {
	head, ok, err := c.Head(ctx)
	if err != nil {
		return Lag{Position: c.pos, Unit: UnitKeyDistance, Known: true}, err
	}
	if !ok {
		head = ""
	}
	return c.LagTo(ctx, head)
}

// LagTo is Lag against a head already read ("" for an empty table).
func (c *Consumer) LagTo(ctx context.Context, head string) (Lag, error) {
	return CountLag(ctx, c.cfg.Source, c.info, c.cursor, c.pos, head)
}

// CountLag is how far position is behind head in a table of src: the rows
// between them where src counts them (routes.RangeCounter), else as
// LagBetween.
func CountLag(ctx context.Context, src routes.Source, info *routes.TableInfo, cursor, position, head string) (Lag, error) {
	l := Lag{Position: position, Head: head, Unit: UnitKeyDistance, Known: true}
	if rc, ok := routes.As[routes.RangeCounter](src); ok && cursor != "" {
		l.Unit = UnitRows
		if head == "" || Compare(head, position) <= 0 {
			return l, nil
		}
		n, err := rc.CountRange(ctx, info, cursor, position, head)
		if err == nil {
			l.Behind = n
			return l, nil
		}
		if !errors.Is(err, routes.ErrUnsupported) {
			return l, err
		}
	}
	l = LagBetween(position, head, info.RowEstimate)
	if cursor == routes.SnapshotCursor && l.Unit == UnitKeyDistance {
		l.Unit = UnitSnapshots // sequence numbers: one per snapshot
	}
	return l, nil
}

// LagBetween compares two offsets of a table as Lag does; estimate is the
// table's row estimate, used when position is the start of the table.
func LagBetween(position, head string, estimate int64) Lag {
	l := Lag{Position: position, Head: head, Unit: UnitKeyDistance, Known: true}
	if head == "" || Compare(head, position) <= 0 {
		return l
	}
	return lagBetween(l, estimate)
}

func lagBetween(l Lag, estimate int64) Lag {
	h, errH := strconv.ParseInt(l.Head, 10, 64)
	p, errP := strconv.ParseInt(l.Position, 10, 64)
	switch {
	case errH == nil && errP == nil:
		l.Behind = h - p
	case l.Position == "" && estimate > 0:
		l.Behind, l.Unit = estimate, UnitRows
	case l.Position == "" && errH == nil:
		l.Behind = h
	default:
		ht, okH := parseTime(l.Head)
		pt, okP := parseTime(l.Position)
		l.Behind, l.Unit, l.Known = int64(ht.Sub(pt).Seconds()), UnitSeconds, okH && okP
	}
	return l
}

var timeLayouts = []string{"2006-01-02 15:04:05.999999-07", "2006-01-02 15:04:05.999999", "2006-01-02"}

func parseTime(s string) (time.Time, bool) {
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
