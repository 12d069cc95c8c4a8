package incremental

import (
	"container/heap"
	"context"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

// bound returns the offset that ends a batch of at most maxRows rows past
// the position (rows tying on it all included), or head.
func (c *Consumer) bound(ctx context.Context, head string, maxRows int64) (string, error) {
	if maxRows <= 0 {
		return head, nil
	}
	if rc, ok := routes.As[routes.RangeCounter](c.cfg.Source); ok {
		// A count (an index range scan) is cheaper than the cursor column.
		if n, err := rc.CountRange(ctx, c.info, c.cursor, c.pos, head); err == nil && n <= maxRows {
			return head, nil
		}
	}
	s, err := c.open(ctx, c.pos, head, []string{c.cursor})
	if err != nil {
		return "", err
	}
	defer s.Release()
	h := &int64Heap{}
	var format func(int64) string
	var n int64
	for s.Next() {
		col := s.RecordBatch().Column(0)
		if format == nil {
			if format, err = cursorFormat(col.DataType()); err != nil {
				return "", fmt.Errorf("max_batch_rows on %s.%s: %w", c.info.Ref, c.cursor, err)
			}
		}
		n += int64(col.Len())
		pushSmallest(h, col, maxRows)
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	if n <= maxRows || h.Len() == 0 {
		return head, nil
	}
	return format((*h)[0]), nil
}

// pushSmallest keeps the maxRows smallest cursor values of col in h.
func pushSmallest(h *int64Heap, col arrow.Array, maxRows int64) {
	for i := 0; i < col.Len(); i++ {
		if col.IsNull(i) {
			continue
		}
		v := routes.IntegerAt(col, i)
		switch {
		case int64(h.Len()) < maxRows:
			heap.Push(h, v)
		case v < (*h)[0]:
			(*h)[0] = v
			heap.Fix(h, 0)
		}
	}
}

// int64Heap is a max-heap.
type int64Heap []int64

func (h int64Heap) Len() int           { return len(h) }
func (h int64Heap) Less(i, j int) bool { return h[i] > h[j] }
func (h int64Heap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *int64Heap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *int64Heap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Boundable reports whether max_batch_rows can bound a batch of the
// table by its cursor column: an integer, timestamp or date column.
func Boundable(info *routes.TableInfo, cursor string) bool {
	s := info.Schema()
	i := s.FieldIndices(cursor)
	if len(i) == 0 {
		return false
	}
	_, err := cursorFormat(s.Field(i[0]).Type)
	return err == nil
}

// cursorFormat renders a cursor value the way sources encode offsets:
// integers in decimal, times as "2006-01-02 15:04:05.000000" in UTC (with
// "+00" when zoned), dates as "2006-01-02".
func cursorFormat(t arrow.DataType) (func(int64) string, error) {
	switch t := t.(type) {
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type,
		*arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type:
		return func(v int64) string { return strconv.FormatInt(v, 10) }, nil
	case *arrow.TimestampType:
		zone := ""
		if t.TimeZone != "" {
			zone = "+00"
		}
		return func(v int64) string {
			return arrow.Timestamp(v).ToTime(t.Unit).UTC().Format("2006-01-02 15:04:05.000000") + zone
		}, nil
	case *arrow.Date32Type:
		return func(v int64) string { return arrow.Date32(v).ToTime().Format("2006-01-02") }, nil
	}
	return nil, fmt.Errorf("%w: a batch bound needs an integer, timestamp or date cursor, not %s", routes.ErrUnsupported, t)
}
