package bigquery

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

func TestNDJSONEncoder(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	info := &routes.TableInfo{Ref: routes.TableRef{Name: "t"}, Columns: []routes.Column{
		{Name: "id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "n", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "tm", Type: arrow.FixedWidthTypes.Time64us, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "dt", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "js", Type: arrow.BinaryTypes.String, NativeType: "jsonb", Nullable: true},
		{Name: "ia", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
	}}
	src, _, err := array.RecordFromJSON(mem, info.Schema(), strings.NewReader(`[
		{"id": 1, "f": 1.5, "n": "-12.30", "s": "q\"\n✓", "b": "AP8=", "d": "2024-02-29", "tm": 45296000001,
		 "ts": "2024-01-01T10:00:00.000001Z", "dt": "1999-12-31T23:59:59.5", "js": "{\"a\": [1]}", "ia": [1, 2], "st": {"k": "v"}},
		{"id": 2, "f": null, "n": null, "s": "", "b": null, "d": null, "tm": null, "ts": null, "dt": null, "js": null, "ia": [], "st": {"k": null}}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Release()
	lay, err := newLayout(info)
	if err != nil {
		t.Fatal(err)
	}
	conv, err := lay.convert(context.Background(), src, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer conv.Release()
	var buf bytes.Buffer
	enc := newNDJSONEncoder(&buf, lay.arrow)
	if err := enc.Write(conv); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	want := `{"id":1,"f":1.5,"n":"-12.30","s":"q\"\n✓","b":"AP8=","d":"2024-02-29","tm":"12:34:56.000001","ts":"2024-01-01T10:00:00.000001Z","dt":"1999-12-31T23:59:59.5","js":{"a": [1]},"ia":[1,2],"st":{"k":"v"}}` + "\n" +
		`{"id":2,"s":"","ia":[],"st":{}}` + "\n"
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestAppendFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{{math.NaN(), `"NaN"`}, {math.Inf(1), `"Infinity"`}, {math.Inf(-1), `"-Infinity"`}, {-2.25e-300, "-2.25e-300"}, {3, "3"}}
	for _, tt := range tests {
		if got := string(appendFloat(nil, tt.in)); got != tt.want {
			t.Errorf("appendFloat(%v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
