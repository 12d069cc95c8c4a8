package stream

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

// TestTableKey: the paging key is the cursor then the primary key's other
// columns, and its cursor text round-trips through encodeKey/decodeKey.
func TestTableKey(t *testing.T) {
	info := func(pk ...string) *routes.TableInfo { return &routes.TableInfo{PrimaryKey: pk} }
	keys := []struct {
		info   *routes.TableInfo
		cursor string
		want   string
	}{
		{info("id"), "id", "[id]"},
		{info("id"), "updated_at", "[updated_at id]"},
		{info("tenant", "id"), "id", "[id tenant]"},
		{info(), "created", "[created]"},
	}
	for _, k := range keys {
		if got := fmt.Sprint(keyOf(k.info, k.cursor)); got != k.want {
			t.Errorf("keyOf(pk %v, %s) = %s, want %s", k.info.PrimaryKey, k.cursor, got, k.want)
		}
	}
	for _, vals := range [][]string{nil, {"9223372036854775807"}, {"2024-03-01 10:00:00.000001+00", "42"}, {`a"b,c`, "", "x"}} {
		enc := encodeKey(vals)
		dec, err := decodeKey(enc, max(len(vals), 1))
		if err != nil || fmt.Sprintf("%q", dec) != fmt.Sprintf("%q", vals) {
			t.Errorf("%q → %q → %q, %v", vals, enc, dec, err)
		}
	}
	if enc := encodeKey([]string{"18446744073709551615"}); enc != "18446744073709551615" {
		t.Errorf("a one-column key is saved as %q, want its value as it is", enc)
	}
	for _, bad := range []struct {
		s string
		n int
	}{{"42", 2}, {`["1"]`, 2}, {`["1","2","3"]`, 2}} {
		if _, err := decodeKey(bad.s, bad.n); err == nil {
			t.Errorf("decodeKey(%q, %d) accepted", bad.s, bad.n)
		}
	}
}

func TestTablePageable(t *testing.T) {
	ok := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint64, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
		arrow.FixedWidthTypes.Date32, &arrow.Decimal128Type{Precision: 12, Scale: 2}, arrow.BinaryTypes.String}
	for _, dt := range ok {
		if !pageable(dt) {
			t.Errorf("%s refused", dt)
		}
	}
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Boolean, arrow.BinaryTypes.Binary, nil} {
		if pageable(dt) {
			t.Errorf("%v accepted as a cursor", dt)
		}
	}
}
