package bigquery

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/weirhq/weir/routes"
)

// ndjsonEncoder writes staged record batches as newline-delimited JSON in
// the forms BigQuery's JSON loader reads: NULLs left out, NUMERIC and
// BIGNUMERIC as exact strings, BYTES as base64, DATE/TIME/DATETIME as
// their canonical text, TIMESTAMP in RFC 3339 UTC, JSON columns as the
// JSON value itself, REPEATED as arrays and RECORD as objects.
type ndjsonEncoder struct {
	w      *bufio.Writer
	schema *arrow.Schema
	keys   [][]byte // the quoted column names, with their colon
	buf    []byte
}

func newNDJSONEncoder(w io.Writer, schema *arrow.Schema) *ndjsonEncoder {
	e := &ndjsonEncoder{w: bufio.NewWriterSize(w, 64<<10), schema: schema}
	for _, f := range schema.Fields() {
		k, _ := json.Marshal(f.Name)
		e.keys = append(e.keys, append(k, ':'))
	}
	return e
}

func (e *ndjsonEncoder) Write(rec arrow.RecordBatch) error {
	for row := range int(rec.NumRows()) {
		e.buf = append(e.buf[:0], '{')
		first := true
		for c, col := range rec.Columns() {
			if col.IsNull(row) {
				continue
			}
			if !first {
				e.buf = append(e.buf, ',')
			}
			first = false
			e.buf = append(e.buf, e.keys[c]...)
			var err error
			if e.buf, err = appendJSON(e.buf, col, row); err != nil {
				return &routes.ValueError{Column: e.schema.Field(c).Name, Err: err}
			}
		}
		e.buf = append(e.buf, '}', '\n')
		if _, err := e.w.Write(e.buf); err != nil {
			return err
		}
	}
	return nil
}

// Close flushes; it does not close the underlying writer.
func (e *ndjsonEncoder) Close() error { return e.w.Flush() }

// Discard drops nothing: rows go out as they are written.
func (e *ndjsonEncoder) Discard() {}

// appendJSON appends the value of row i of a staged column.
func appendJSON(dst []byte, a arrow.Array, i int) ([]byte, error) {
	switch a := a.(type) {
	case *array.Int64:
		return strconv.AppendInt(dst, a.Value(i), 10), nil
	case *array.Float64:
		return appendFloat(dst, a.Value(i)), nil
	case *array.Boolean:
		return strconv.AppendBool(dst, a.Value(i)), nil
	case *array.String:
		return appendString(dst, a.Value(i)), nil
	case *array.Binary:
		return appendString(dst, base64.StdEncoding.EncodeToString(a.Value(i))), nil
	case *array.Decimal128:
		return appendString(dst, a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)), nil
	case *array.Decimal256:
		return appendString(dst, a.Value(i).ToString(a.DataType().(*arrow.Decimal256Type).Scale)), nil
	case *array.Date32:
		return appendString(dst, a.Value(i).FormattedString()), nil
	case *array.Time64:
		return appendString(dst, a.Value(i).FormattedString(arrow.Microsecond)), nil
	case *array.Timestamp:
		return appendTimestamp(dst, a, i), nil
	case array.ExtensionArray: // JSON: the value itself
		raw := a.Storage().(*array.String).Value(i)
		if !json.Valid([]byte(raw)) {
			return nil, fmt.Errorf("invalid JSON %q", raw)
		}
		return append(dst, raw...), nil
	case *array.List:
		return appendList(dst, a, i)
	case *array.Struct:
		return appendStruct(dst, a, i)
	}
	return nil, fmt.Errorf("no JSON form for %s", a.DataType())
}

// appendFloat: BigQuery reads NaN and the infinities from strings.
func appendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

func appendString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(dst, b...)
}

// appendTimestamp writes TIMESTAMP as RFC 3339 UTC and DATETIME without
// a zone, both in microseconds.
func appendTimestamp(dst []byte, a *array.Timestamp, i int) []byte {
	t := a.DataType().(*arrow.TimestampType)
	v := a.Value(i).ToTime(t.Unit).UTC()
	layout := "2006-01-02T15:04:05.999999"
	if t.TimeZone != "" {
		layout += "Z07:00"
	}
	dst = append(dst, '"')
	dst = v.AppendFormat(dst, layout)
	return append(dst, '"')
}

func appendList(dst []byte, a *array.List, i int) ([]byte, error) {
	start, end := a.ValueOffsets(i)
	values := a.ListValues()
	dst = append(dst, '[')
	for j := start; j < end; j++ {
		if j > start {
			dst = append(dst, ',')
		}
		if values.IsNull(int(j)) {
			return nil, fmt.Errorf("a NULL inside an array (BigQuery arrays cannot hold NULL)")
		}
		var err error
		if dst, err = appendJSON(dst, values, int(j)); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

func appendStruct(dst []byte, a *array.Struct, i int) ([]byte, error) {
	st := a.DataType().(*arrow.StructType)
	dst = append(dst, '{')
	first := true
	for f := range a.NumField() {
		if a.Field(f).IsNull(i) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendString(dst, st.Field(f).Name)
		dst = append(dst, ':')
		var err error
		if dst, err = appendJSON(dst, a.Field(f), i); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}
