package iceberg

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

// converter turns source batches into batches of the table's Arrow schema:
// columns by name in the table's order, absent ones null.
type converter struct {
	target *arrow.Schema // the table's schema, with field ids
	src    []int         // per target column, its index in the source batch or -1
	mem    memory.Allocator
}

func newConverter(src, target *arrow.Schema, mem memory.Allocator) (*converter, error) {
	c := &converter{target: target, src: make([]int, target.NumFields()), mem: mem}
	for i, f := range target.Fields() {
		c.src[i] = -1
		if idx := src.FieldIndices(f.Name); len(idx) > 0 {
			c.src[i] = idx[0]
		} else if !f.Nullable {
			return nil, fmt.Errorf("required column %s is missing from the source", f.Name)
		}
	}
	for _, f := range src.Fields() {
		if len(target.FieldIndices(f.Name)) == 0 {
			return nil, fmt.Errorf("column %s is not in the destination table", f.Name)
		}
	}
	return c, nil
}

// convert returns a new batch; the caller still owns (and releases) rec.
func (c *converter) convert(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, len(c.src))
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, si := range c.src {
		f := c.target.Field(i)
		var err error
		if si < 0 {
			cols[i] = array.MakeArrayOfNull(c.mem, f.Type, int(rec.NumRows()))
		} else if cols[i], err = convertArray(ctx, rec.Column(si), f.Type, c.mem); err != nil {
			return nil, &routes.ValueError{Column: f.Name, Err: err}
		}
		// PostgreSQL's infinity reaches Arrow as a sentinel that Iceberg
		// would keep as a date in year 294247 (or 5881580)
		if inf := routes.Infinity(cols[i]); inf != "" {
			return nil, &routes.ValueError{Column: f.Name, Err: fmt.Errorf("%s has no Iceberg value (Iceberg has no infinite dates): replace it at the source, e.g. a view with NULLIF(col, '%[1]s')", inf)}
		}
		// A null in a required column would be written as whatever its slot
		// holds (an upsert's NULL key landed as "" or a random integer).
		if n := cols[i].NullN(); n > 0 && !f.Nullable {
			return nil, &routes.ValueError{Column: f.Name, Err: fmt.Errorf("required in the table (NOT NULL, or a key: an identifier field), but %d rows of the batch hold NULL there", n)}
		}
	}
	return array.NewRecordBatch(c.target, cols, rec.NumRows()), nil
}

// convertArray casts arr to dst: integers widen, uint64 becomes
// decimal(20,0), intervals and wide decimals become text, lists convert
// element-wise.
func convertArray(ctx context.Context, arr arrow.Array, dst arrow.DataType, mem memory.Allocator) (arrow.Array, error) {
	src := arr.DataType()
	switch {
	case arrow.TypeEqual(src, dst):
		arr.Retain()
		return arr, nil
	case dst.ID() == arrow.STRING && !isText(src):
		return textArray(arr, mem)
	case isList(src) && isList(dst):
		return convertList(ctx, arr, dst, mem)
	}
	if ext, ok := arr.(array.ExtensionArray); ok {
		return convertArray(ctx, ext.Storage(), dst, mem)
	}
	out, err := compute.CastArray(compute.WithAllocator(ctx, mem), arr, compute.SafeCastOptions(dst))
	if err != nil {
		return nil, fmt.Errorf("cast %s to %s: %w", src, dst, err)
	}
	return out, nil
}

func isText(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return true
	case arrow.EXTENSION:
		return isText(t.(arrow.ExtensionType).StorageType())
	}
	return false
}

func isList(t arrow.DataType) bool {
	return t.ID() == arrow.LIST || t.ID() == arrow.LARGE_LIST
}

// convertList converts the values of a list and rebuilds it with dst's
// type over the same offsets.
func convertList(ctx context.Context, arr arrow.Array, dst arrow.DataType, mem memory.Allocator) (arrow.Array, error) {
	if arr.DataType().ID() != dst.ID() {
		return compute.CastArray(compute.WithAllocator(ctx, mem), arr, compute.SafeCastOptions(dst))
	}
	values := arr.(array.ListLike).ListValues()
	elem, err := convertArray(ctx, values, dst.(arrow.ListLikeType).Elem(), mem)
	if err != nil {
		return nil, err
	}
	defer elem.Release()
	d := arr.Data()
	data := array.NewData(dst, d.Len(), d.Buffers(), []arrow.ArrayData{elem.Data()}, d.NullN(), d.Offset())
	defer data.Release()
	return array.MakeFromData(data), nil
}

// textArray renders each value as text: intervals the way PostgreSQL
// prints them, wide decimals exactly, maps and structs as JSON.
func textArray(arr arrow.Array, mem memory.Allocator) (arrow.Array, error) {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(arr.Len())
	for i := 0; i < arr.Len(); i++ {
		if arr.IsNull(i) {
			b.AppendNull()
			continue
		}
		s, err := valueText(arr, i)
		if err != nil {
			return nil, err
		}
		b.Append(s)
	}
	return b.NewArray(), nil
}

func valueText(arr arrow.Array, i int) (string, error) {
	switch a := arr.(type) {
	case *array.MonthDayNanoInterval:
		return routes.IntervalText(a.Value(i)), nil
	case *array.DayTimeInterval:
		v := a.Value(i)
		return string(routes.AppendInterval(nil, 0, v.Days, int64(v.Milliseconds)*1000)), nil
	case *array.MonthInterval:
		return string(routes.AppendInterval(nil, int32(a.Value(i)), 0, 0)), nil
	case *array.Duration:
		unit := a.DataType().(*arrow.DurationType).Unit.Multiplier()
		return clockText(int64(a.Value(i)) * int64(unit)), nil
	case *array.Decimal128: // plain digits: ValueStr prints -1e-30
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale), nil
	case *array.Decimal256:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal256Type).Scale), nil
	}
	b, err := json.Marshal(arr.GetOneForMarshal(i))
	if err != nil {
		return "", fmt.Errorf("render %s as text: %w", arr.DataType(), err)
	}
	return string(b), nil
}

// clockText prints a signed duration as [-]HH:MM:SS[.ffffff].
func clockText(nanos int64) string {
	sign := ""
	if nanos < 0 {
		sign, nanos = "-", -nanos
	}
	d := time.Duration(nanos)
	s := fmt.Sprintf("%s%02d:%02d:%02d", sign, int64(d/time.Hour), int64(d/time.Minute)%60, int64(d/time.Second)%60)
	if frac := (nanos % 1e9) / 1e3; frac != 0 {
		s += fmt.Sprintf(".%06d", frac)
	}
	return s
}
