package postgres

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/weirhq/weir/routes"
)

// smallStream is the binary COPY of ten rows of benchColumns.
func smallStream(t *testing.T) []byte {
	stream, _ := makeBenchStream(t, 10)
	return stream
}

func TestDecoder_StreamErrors(t *testing.T) {
	s := smallStream(t)
	tests := []struct {
		name  string
		input []byte
		want  string
	}{
		{"empty", nil, "before its header"},
		{"truncated", s[:len(s)-5], "before its trailer"},
		{"no trailer", s[:len(s)-2], "before its trailer"},
		{"after trailer", append(append([]byte{}, s...), 0, 1), "data after the trailer"},
		{"bad signature", append([]byte("PGCOPY\n\xff\r\n\x01"), s[11:]...), "bad signature"},
		{"field count", append(append([]byte{}, s[:copyHeaderLen]...), 0, 3, 0xff, 0xff), "tuple has 3 fields, want 8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := checkedAlloc(t)
			dec := newDecoder(benchColumns(), mem, 0, func(b arrow.RecordBatch) error { b.Release(); return nil })
			_, werr := dec.Write(tt.input)
			err := dec.Close()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Write: %v, Close: %v; want %q", werr, err, tt.want)
			}
		})
	}
}

func TestDecoder_EmptyResult(t *testing.T) {
	mem := checkedAlloc(t)
	s := smallStream(t)
	empty := append(append([]byte{}, s[:copyHeaderLen]...), 0xff, 0xff)
	calls := 0
	dec := newDecoder(benchColumns(), mem, 0, func(b arrow.RecordBatch) error { calls++; b.Release(); return nil })
	if _, err := dec.Write(empty); err != nil {
		t.Fatal(err)
	}
	if err := dec.Close(); err != nil || calls != 0 || dec.Rows() != 0 {
		t.Fatalf("close %v, %d emits, %d rows", err, calls, dec.Rows())
	}
}

func TestDecoder_EmitErrorStops(t *testing.T) {
	mem := checkedAlloc(t)
	stop := bytes.ErrTooLarge
	dec := newDecoder(benchColumns(), mem, 1, func(b arrow.RecordBatch) error { b.Release(); return stop })
	if _, err := dec.Write(smallStream(t)); err != stop {
		t.Fatalf("Write: %v, want the emit error", err)
	}
	if err := dec.Close(); err != stop {
		t.Fatalf("Close: %v", err)
	}
}

func TestDecoder_UnsupportedColumn(t *testing.T) {
	mem := checkedAlloc(t)
	cols := []routes.Column{{Name: "x", Type: arrow.FixedWidthTypes.Time32s, NativeType: "time"}}
	dec := newDecoder(cols, mem, 0, func(b arrow.RecordBatch) error { b.Release(); return nil })
	_, err := dec.Write([]byte("PGCOPY"))
	if err == nil || !strings.Contains(err.Error(), `column "x"`) {
		t.Fatalf("Write: %v", err)
	}
	dec.Close()
}

func TestEncoder_Errors(t *testing.T) {
	mem := checkedAlloc(t)
	tests := []struct {
		name, native string
		typ          arrow.DataType
		fill         func(array.Builder)
		want         string
	}{
		{"int overflow", "smallint", arrow.PrimitiveTypes.Int64, func(b array.Builder) { b.(*array.Int64Builder).Append(1 << 20) }, "out of range"},
		{"uint64 into bigint", "bigint", arrow.PrimitiveTypes.Uint64, func(b array.Builder) { b.(*array.Uint64Builder).Append(math.MaxUint64) }, "out of range"},
		{"bad numeric text", "numeric", arrow.BinaryTypes.String, func(b array.Builder) { b.(*array.StringBuilder).Append("12abc") }, "invalid decimal text"},
		{"bad uuid text", "uuid", arrow.BinaryTypes.String, func(b array.Builder) { b.(*array.StringBuilder).Append("not-a-uuid") }, "invalid uuid"},
		{"no pair", "integer", arrow.BinaryTypes.String, func(b array.Builder) { b.(*array.StringBuilder).Append("1") }, "cannot write Arrow utf8 into PostgreSQL integer"},
		{"array of unknown", "inet[]", arrow.ListOf(arrow.BinaryTypes.String), func(b array.Builder) { b.AppendNull() }, "cannot write"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := array.NewBuilder(mem, tt.typ)
			defer b.Release()
			tt.fill(b)
			arr := b.NewArray()
			defer arr.Release()
			rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "c", Type: tt.typ, Nullable: true}}, nil), []arrow.Array{arr}, 1)
			defer rec.Release()
			enc := newEncoder([]routes.Column{{Name: "c", NativeType: tt.native}}, &bytes.Buffer{})
			err := enc.Encode(rec)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), `column c`) && !strings.Contains(err.Error(), `"c"`) {
				t.Fatalf("Encode: %v, want %q naming the column", err, tt.want)
			}
		})
	}
}
