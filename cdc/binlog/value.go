package binlog

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes/mysql"
)

// layout maps one table map's columns onto a captured table and knows how
// to turn each binlog value into what the mysql route's bulk read gives.
type layout struct {
	t       *cdc.Table
	tm      *replication.TableMapEvent // the table map it was built from
	idx     []int                      // binlog column → table column
	inOrder bool                       // idx is the identity over all the table's columns
	conv    []conv                     // by binlog column: worked out once per table map, not per value
	check   *mysql.ChangeValues        // temporal values by the bulk read's rules
	// fast is each binlog column's decode by fastRows; nil when a column
	// needs go-mysql's (slowRows, against signed).
	fast   []fastCol
	signed *replication.TableMapEvent
	slabs  slabs // the rows the fold keeps, and the keys
	before slabs // before images (fastRows)
}

// conv is how one binlog column's values become the bulk read's.
type conv struct {
	kind   convKind
	labels []string // ENUM, SET
	// fixed is a fixed-length binary column's byte length (BINARY(n)): the
	// binlog strips a value's trailing 0x00 bytes, which are part of it.
	fixed int
	// unsigned is an unsigned integer column's MySQL type (convUnsigned):
	// its values arrive decoded as signed (see slowRows).
	unsigned byte
}

type convKind byte

const (
	convAsIs convKind = iota
	convEnum
	convSet
	convString // []byte → string
	convBinary // string → []byte, BINARY(n) padding restored
	convBool
	convUint64
	convUnsigned // a signed decode of an unsigned integer → its value
)

// layout returns the layout of the table's latest table map, built again
// only when a table map differs from the one before in what the layout
// reads. Column names come with binlog_row_metadata=FULL; without them the
// binlog columns must be the probed columns, in order.
func (d *decoder) layout(t *cdc.Table, tm *replication.TableMapEvent) (*layout, error) {
	if l := d.layouts[t]; l != nil && (l.tm == tm || sameLayout(l.tm, tm)) {
		l.tm = tm
		return l, nil
	}
	l := &layout{t: t, tm: tm, idx: make([]int, tm.ColumnCount), conv: make([]conv, tm.ColumnCount),
		// only what go-mysql's decode of the images reads (slowRows)
		signed: &replication.TableMapEvent{TableID: tm.TableID, Flags: tm.Flags, Schema: tm.Schema, Table: tm.Table,
			ColumnCount: tm.ColumnCount, ColumnType: tm.ColumnType, ColumnMeta: tm.ColumnMeta, NullBitmap: tm.NullBitmap}}
	if t.Info != nil {
		var err error
		if l.check, err = mysql.NewChangeValues(d.sourceURL, t.Source, t.Info.Columns); err != nil {
			return nil, err
		}
	}
	names := tm.ColumnNameString()
	for i := range l.idx {
		l.idx[i] = i
		if len(names) == len(l.idx) {
			l.idx[i] = indexOf(t.Columns, names[i])
		}
		if l.idx[i] < 0 || l.idx[i] >= len(t.Columns) {
			return nil, fmt.Errorf("%s: the binlog has column %d (%s) the bootstrap did not see: schema changes are not followed; re-bootstrap (weir reset)", t.Source, i, nameAt(names, i))
		}
	}
	if len(names) == 0 && len(l.idx) != len(t.Columns) {
		return nil, fmt.Errorf("%s: the binlog has %d columns, the table %d, and no column names (set binlog_row_metadata=FULL)", t.Source, len(l.idx), len(t.Columns))
	}
	l.inOrder = len(l.idx) == len(t.Columns)
	for i, c := range l.idx {
		l.inOrder = l.inOrder && c == i
	}
	enums, sets, fixed, unsigned := tm.EnumStrValueMap(), tm.SetStrValueMap(), fixedLengths(tm), tm.UnsignedMap()
	for i := range l.conv {
		c := &l.conv[i]
		if unsigned[i] && isInteger(tm.ColumnType[i]) {
			c.kind, c.unsigned = convUnsigned, tm.ColumnType[i]
		}
		if labels, ok := enums[i]; ok {
			c.kind, c.labels = convEnum, labels
			continue
		}
		if labels, ok := sets[i]; ok {
			c.kind, c.labels = convSet, labels
			continue
		}
		if t.Info == nil {
			continue
		}
		switch t.Info.Columns[l.idx[i]].Type.(type) {
		case *arrow.StringType, *arrow.LargeStringType:
			c.kind = convString
		case *arrow.BinaryType, *arrow.LargeBinaryType:
			c.kind, c.fixed = convBinary, fixed[i]
		case *arrow.BooleanType:
			c.kind = convBool
		case *arrow.Uint64Type:
			if c.kind != convUnsigned {
				c.kind = convUint64
			}
		}
	}
	l.fast, _ = fastColumns(tm, l.conv)
	d.layouts[t] = l
	return l, nil
}

// sameLayout reports whether two table maps of one table agree on all a
// layout reads: column types, metadata, signedness, names, ENUM and SET
// labels.
func sameLayout(a, b *replication.TableMapEvent) bool {
	return a.ColumnCount == b.ColumnCount && bytes.Equal(a.ColumnType, b.ColumnType) &&
		slices.Equal(a.ColumnMeta, b.ColumnMeta) && bytes.Equal(a.SignednessBitmap, b.SignednessBitmap) &&
		reflect.DeepEqual(a.ColumnName, b.ColumnName) && reflect.DeepEqual(a.EnumStrValue, b.EnumStrValue) &&
		reflect.DeepEqual(a.SetStrValue, b.SetStrValue)
}

// fixedLengths reads the byte length of each MYSQL_TYPE_STRING column
// (CHAR(n), BINARY(n); not ENUM or SET, which share the type) from the table
// map's metadata: the real type in the high byte, the length in the low
// byte, with two more length bits folded into the real type for lengths
// over 255 (MySQL's and MariaDB's encoding, sql/field.cc
// Field_string::do_save_field_metadata).
func fixedLengths(tm *replication.TableMapEvent) map[int]int {
	out := map[int]int{}
	for i, typ := range tm.ColumnType {
		if typ != gomysql.MYSQL_TYPE_STRING || i >= len(tm.ColumnMeta) {
			continue
		}
		meta := tm.ColumnMeta[i]
		real, n := byte(meta>>8), int(meta&0xff)
		if real&0x30 != 0x30 { // a length over 255
			n |= int((real&0x30)^0x30) << 4
			real |= 0x30
		}
		if real == gomysql.MYSQL_TYPE_STRING {
			out[i] = n
		}
	}
	return out
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func nameAt(names []string, i int) string {
	if i < len(names) {
		return names[i]
	}
	return "?"
}

// row lines a binlog image up with the table's columns; a value the bulk
// read refuses fails it. When the binlog's columns are the table's, in
// order (the usual case), the image becomes the row: it is go-mysql's,
// made for this event alone.
func (l *layout) row(image []any) ([]any, error) {
	row := image
	if !l.inOrder || len(image) != len(l.t.Columns) {
		row = make([]any, len(l.t.Columns))
	}
	for i, v := range image {
		if i >= len(l.idx) {
			continue
		}
		col := l.idx[i]
		if l.check != nil {
			var err error
			if v, err = l.check.Check(col, v); err != nil {
				return nil, err
			}
		}
		row[col] = l.value(i, v)
	}
	return row, nil
}

// value maps one binlog value (binlog column i) to what the mysql route's
// decoder makes of the same value read by SELECT: ENUM (an index) and SET
// (a bit mask) become their labels, text as string, binary as []byte,
// tinyint(1) and bit(1) as bool, bit(n) as uint64. Decimals, dates and
// times arrive as the text the bulk read parses.
func (l *layout) value(i int, v any) any {
	if v == nil {
		return nil
	}
	c := &l.conv[i]
	switch c.kind {
	case convEnum:
		return enumLabel(c.labels, v)
	case convSet:
		return setLabels(c.labels, v)
	case convString:
		if b, ok := v.([]byte); ok {
			return string(b)
		}
	case convBinary:
		var b []byte
		switch x := v.(type) {
		case string:
			b = []byte(x)
		case []byte:
			b = x
		default:
			return v
		}
		if len(b) < c.fixed { // BINARY(n): put back the stripped 0x00 padding
			b = append(make([]byte, 0, c.fixed), b...)[:c.fixed]
		}
		return b
	case convBool:
		return asInt(v) != 0
	case convUint64:
		return uint64(asInt(v))
	case convUnsigned:
		return unsign(c.unsigned, v)
	}
	return v
}

// isInteger reports the MySQL integer types, whose values go-mysql
// decodes as signed or unsigned by the table map's signedness bitmap.
func isInteger(typ byte) bool {
	switch typ {
	case gomysql.MYSQL_TYPE_TINY, gomysql.MYSQL_TYPE_SHORT, gomysql.MYSQL_TYPE_INT24, gomysql.MYSQL_TYPE_LONG, gomysql.MYSQL_TYPE_LONGLONG:
		return true
	}
	return false
}

// unsign turns the signed decode of an unsigned integer column of MySQL
// type typ into the value go-mysql's unsigned decode gives: the same bits
// as uint8, uint16, uint32 (MEDIUMINT's 24 bits, INT) or uint64.
func unsign(typ byte, v any) any {
	switch x := v.(type) {
	case int8:
		return uint8(x)
	case int16:
		return uint16(x)
	case int32:
		if typ == gomysql.MYSQL_TYPE_INT24 {
			return uint32(x) & 0xffffff
		}
		return uint32(x)
	case int64:
		return uint64(x)
	}
	return v
}

func enumLabel(labels []string, v any) any {
	n := asInt(v)
	if n >= 1 && int(n) <= len(labels) {
		return labels[n-1]
	}
	return "" // MySQL's invalid-value enum, index 0
}

func setLabels(labels []string, v any) any {
	mask := uint64(asInt(v))
	var out []string
	for i, l := range labels {
		if mask&(1<<uint(i)) != 0 {
			out = append(out, l)
		}
	}
	return strings.Join(out, ",")
}

// asInt reads any integer go-mysql hands over.
func asInt(v any) int64 {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	case int:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		return int64(x)
	}
	return 0
}
