package runner

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes/stream"
)

// Flattening a batch of JSON events into one Arrow record (docs/streams.md):
// each top-level field of the event object is a column; nested objects and
// arrays are kept as their JSON text. With a contract the columns are the
// contract's, as text, and the contract check casts them to its types.
// Without one, a column's type is inferred from the first batch in which
// it has a non-null value — boolean, int64 (every number integral),
// float64 (any other number), else utf8 — and is then kept for the rest
// of the process; new columns are added in name order (byte order), after
// the known ones. An event whose value does not fit its column's type is
// quarantined, as is an event that is not a JSON object.

// The bookkeeping columns of a flattened batch.
const (
	rawColumn   = "_weir_raw"   // the payload as received
	errorColumn = "_weir_error" // why the event cannot be loaded (NULL when it can)
	seqColumn   = "_weir_seq"   // the event's place in the batch
)

// flattener turns batches of events into records with a stable schema.
type flattener struct {
	contract []string                  // the contract's columns (all text), when there is a contract
	cols     []string                  // the inferred columns, in order
	types    map[string]arrow.DataType // inferred column types
}

func newFlattener(contractCols []string) *flattener {
	return &flattener{contract: contractCols, types: map[string]arrow.DataType{}}
}

// columns are the data columns of the next record, with their types.
func (f *flattener) columns() ([]string, []arrow.DataType) {
	if f.contract != nil {
		types := make([]arrow.DataType, len(f.contract))
		for i := range types {
			types[i] = arrow.BinaryTypes.String
		}
		return f.contract, types
	}
	types := make([]arrow.DataType, len(f.cols))
	for i, c := range f.cols {
		types[i] = f.types[c]
	}
	return f.cols, types
}

// infer adds the columns that first have a value in this batch.
func (f *flattener) infer(events []stream.Event) {
	if f.contract != nil {
		return
	}
	seen := map[string]arrow.DataType{}
	for _, ev := range events {
		for k, v := range ev.Value {
			if _, known := f.types[k]; known || v == nil {
				continue
			}
			seen[k] = widen(seen[k], kindOf(v))
		}
	}
	var added []string
	for k, t := range seen {
		f.types[k] = t
		added = append(added, k)
	}
	slices.Sort(added)
	f.cols = append(f.cols, added...)
}

// kindOf is the Arrow type a JSON value suggests.
func kindOf(v any) arrow.DataType {
	switch x := v.(type) {
	case bool:
		return arrow.FixedWidthTypes.Boolean
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return arrow.PrimitiveTypes.Int64
		}
		return arrow.PrimitiveTypes.Float64
	}
	return arrow.BinaryTypes.String
}

// widen is the type that holds both a and b (nil a: b).
func widen(a, b arrow.DataType) arrow.DataType {
	switch {
	case a == nil || arrow.TypeEqual(a, b):
		return b
	case isNumber(a) && isNumber(b):
		return arrow.PrimitiveTypes.Float64
	}
	return arrow.BinaryTypes.String
}

func isNumber(t arrow.DataType) bool {
	return t.ID() == arrow.INT64 || t.ID() == arrow.FLOAT64
}

// record flattens a batch; key columns must be present in every event
// (else the event is quarantined). The caller releases the record.
func (f *flattener) record(mem memory.Allocator, events []stream.Event, key []string) arrow.RecordBatch {
	f.infer(events)
	cols, types := f.columns()
	fields := make([]arrow.Field, 0, len(cols)+3)
	for i, c := range cols {
		fields = append(fields, arrow.Field{Name: c, Type: types[i], Nullable: true})
	}
	fields = append(fields,
		arrow.Field{Name: rawColumn, Type: arrow.BinaryTypes.String},
		arrow.Field{Name: errorColumn, Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: seqColumn, Type: arrow.PrimitiveTypes.Int64})
	b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer b.Release()
	for i, ev := range events {
		problem := f.appendEvent(b, cols, types, ev, key)
		b.Field(len(cols)).(*array.StringBuilder).Append(string(ev.Raw))
		if problem != "" {
			b.Field(len(cols) + 1).(*array.StringBuilder).Append(problem)
		} else {
			b.Field(len(cols) + 1).AppendNull()
		}
		b.Field(len(cols) + 2).(*array.Int64Builder).Append(int64(i))
	}
	return b.NewRecordBatch()
}

// appendEvent appends one event's data columns and returns why it cannot
// be loaded ("" when it can).
func (f *flattener) appendEvent(b *array.RecordBuilder, cols []string, types []arrow.DataType, ev stream.Event, key []string) string {
	var problems []string
	if ev.Err != nil {
		problems = append(problems, ev.Err.Error())
	}
	for _, k := range key {
		if ev.Value != nil && ev.Value[k] == nil {
			problems = append(problems, "required("+k+"): the merge key is missing")
		}
	}
	for i, c := range cols {
		if p := appendValue(b.Field(i), types[i], ev.Value[c]); p != "" {
			problems = append(problems, fmt.Sprintf("type(%s): %s", c, p))
		}
	}
	return strings.Join(problems, "; ")
}

// appendValue appends v to a column of type t; a value that does not fit
// is appended as NULL and described.
func appendValue(b array.Builder, t arrow.DataType, v any) string {
	if v == nil {
		b.AppendNull()
		return ""
	}
	switch t.ID() {
	case arrow.BOOL:
		if x, ok := v.(bool); ok {
			b.(*array.BooleanBuilder).Append(x)
			return ""
		}
	case arrow.INT64:
		if n, ok := v.(json.Number); ok {
			if x, err := n.Int64(); err == nil {
				b.(*array.Int64Builder).Append(x)
				return ""
			}
		}
	case arrow.FLOAT64:
		if n, ok := v.(json.Number); ok {
			if x, err := n.Float64(); err == nil && !math.IsInf(x, 0) {
				b.(*array.Float64Builder).Append(x)
				return ""
			}
		}
	default:
		b.(*array.StringBuilder).Append(text(v))
		return ""
	}
	b.AppendNull()
	return fmt.Sprintf("%s does not fit %s (inferred from earlier events; give the task a contract to fix the schema)", text(v), t)
}

// text renders a JSON value as a column's text: strings as they are,
// numbers and booleans as written, objects and arrays as JSON.
func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "true"
		}
		return "false"
	}
	data, _ := json.Marshal(v)
	return string(data)
}
