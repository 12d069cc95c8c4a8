package binlog

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// TestUnsign: the signed decode of every unsigned integer width, unsigned,
// is what go-mysql's unsigned decode of the same bytes gives (value and Go
// type), at each width's edges: 0, the largest signed value + 1 and the
// largest unsigned value.
func TestUnsign(t *testing.T) {
	le := func(n uint64, width int) []byte { return binary.LittleEndian.AppendUint64(nil, n)[:width] }
	for _, c := range []struct {
		typ            byte
		width          int
		signed, unsign func([]byte) any
	}{
		{gomysql.MYSQL_TYPE_TINY, 1, func(b []byte) any { return gomysql.ParseBinaryInt8(b) }, func(b []byte) any { return gomysql.ParseBinaryUint8(b) }},
		{gomysql.MYSQL_TYPE_SHORT, 2, func(b []byte) any { return gomysql.ParseBinaryInt16(b) }, func(b []byte) any { return gomysql.ParseBinaryUint16(b) }},
		{gomysql.MYSQL_TYPE_INT24, 3, func(b []byte) any { return gomysql.ParseBinaryInt24(b) }, func(b []byte) any { return gomysql.ParseBinaryUint24(b) }},
		{gomysql.MYSQL_TYPE_LONG, 4, func(b []byte) any { return gomysql.ParseBinaryInt32(b) }, func(b []byte) any { return gomysql.ParseBinaryUint32(b) }},
		{gomysql.MYSQL_TYPE_LONGLONG, 8, func(b []byte) any { return gomysql.ParseBinaryInt64(b) }, func(b []byte) any { return gomysql.ParseBinaryUint64(b) }},
	} {
		bits := 8 * c.width
		maxU := uint64(1)<<bits - 1
		if bits == 64 {
			maxU = ^uint64(0)
		}
		for _, n := range []uint64{0, 1 << (bits - 1), maxU} {
			t.Run(fmt.Sprintf("%d-bit/%d", bits, n), func(t *testing.T) {
				b := le(n, c.width)
				got, want := unsign(c.typ, c.signed(b)), c.unsign(b)
				if got != want {
					t.Errorf("unsign(%T %v) = %T %v, want %T %v", c.signed(b), c.signed(b), got, got, want, want)
				}
				if fmt.Sprint(want) != fmt.Sprint(n) {
					t.Fatalf("go-mysql's unsigned decode of %d gives %v", n, want)
				}
			})
		}
	}
}

// TestLayout_LatestPerTable: the decoder keeps one layout per table, the
// latest table map's, built again only when a table map differs in what
// the layout reads (here its signedness).
func TestLayout_LatestPerTable(t *testing.T) {
	tbl := &cdc.Table{Source: routes.TableRef{Schema: "s", Name: "t"}, Columns: []string{"a", "b"}, Key: []int{0}}
	d := newDecoder(nil, "")
	tm := func(signedness byte) *replication.TableMapEvent {
		return &replication.TableMapEvent{ColumnCount: 2, ColumnType: []byte{gomysql.MYSQL_TYPE_LONGLONG, gomysql.MYSQL_TYPE_LONG},
			ColumnMeta: []uint16{0, 0}, SignednessBitmap: []byte{signedness}}
	}
	first, err := d.layout(tbl, tm(0))
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 { // a transaction each
		l, err := d.layout(tbl, tm(0))
		if err != nil {
			t.Fatal(err)
		}
		if l != first {
			t.Fatal("an identical table map built a new layout")
		}
	}
	if len(d.layouts) != 1 {
		t.Fatalf("%d layouts held for one table", len(d.layouts))
	}
	l, err := d.layout(tbl, tm(0x40)) // the second column unsigned
	if err != nil {
		t.Fatal(err)
	}
	if l == first || len(d.layouts) != 1 {
		t.Fatalf("a changed table map: new layout %v, %d held", l != first, len(d.layouts))
	}
	row, err := l.row([]any{int64(-1), int32(-1)})
	if err != nil {
		t.Fatal(err)
	}
	if want := []any{int64(-1), uint32(4294967295)}; !reflect.DeepEqual(row, want) {
		t.Errorf("row %#v, want %#v", row, want)
	}
}
