package icebergtest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/weirhq/weir/routes/routestest"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// Rows renders a batch with the conformance columns (by name) as rows:
// amount as text with two decimals, ts in UTC whole seconds.
func Rows(t testing.TB, rec arrow.RecordBatch) []routestest.Row {
	t.Helper()
	col := func(name string) arrow.Array {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) == 0 {
			t.Fatalf("batch has no column %s: %s", name, rec.Schema())
		}
		return rec.Column(idx[0])
	}
	id, name, amount, ts, flag := col("id"), col("name"), col("amount"), col("ts"), col("flag")
	out := make([]routestest.Row, rec.NumRows())
	for i := range out {
		r := &out[i]
		r.ID = intValue(t, id, i)
		r.Name = textValue(name, i)
		r.Amount = amountValue(amount, i)
		r.TS = tsValue(t, ts, i)
		r.Flag = boolValue(t, flag, i)
	}
	return out
}

func intValue(t testing.TB, a arrow.Array, i int) int64 {
	switch a := a.(type) {
	case *array.Int64:
		return a.Value(i)
	case *array.Int32:
		return int64(a.Value(i))
	}
	t.Fatalf("id column is %s", a.DataType())
	return 0
}

func textValue(a arrow.Array, i int) *string {
	if a.IsNull(i) {
		return nil
	}
	s := a.ValueStr(i)
	if sa, ok := a.(*array.String); ok {
		s = sa.Value(i)
	}
	return &s
}

func amountValue(a arrow.Array, i int) *string {
	if a.IsNull(i) {
		return nil
	}
	var s string
	switch a := a.(type) {
	case *array.Decimal128:
		s = a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)
	case *array.String:
		s = a.Value(i)
	default:
		s = fmt.Sprint(a.ValueStr(i))
	}
	return &s
}

func tsValue(t testing.TB, a arrow.Array, i int) *time.Time {
	if a.IsNull(i) {
		return nil
	}
	ta, ok := a.(*array.Timestamp)
	if !ok {
		t.Fatalf("ts column is %s", a.DataType())
	}
	unit := ta.DataType().(*arrow.TimestampType).Unit
	v := ta.Value(i).ToTime(unit).UTC().Truncate(time.Second)
	return &v
}

// boolValue reads a flag that a source without booleans (ClickHouse 18.16's
// UInt8) stored as an integer.
func boolValue(t testing.TB, a arrow.Array, i int) *bool {
	if a.IsNull(i) {
		return nil
	}
	var b bool
	switch a := a.(type) {
	case *array.Boolean:
		b = a.Value(i)
	case *array.Int32:
		b = a.Value(i) != 0
	case *array.Int64:
		b = a.Value(i) != 0
	default:
		t.Fatalf("flag column is %s, want boolean or integer", a.DataType())
	}
	return &b
}
