package binlog

import (
	"fmt"
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
	t     *cdc.Table
	idx   []int // binlog column → table column
	enums map[int][]string
	sets  map[int][]string
	// fixed is each fixed-length string column's byte length (CHAR,
	// BINARY): the binlog strips a BINARY(n) value's trailing 0x00 bytes,
	// which are part of the value.
	fixed map[int]int
	check *mysql.ChangeValues // temporal values by the bulk read's rules
}

// layout returns the table map's layout, built once per table map event.
// Column names come with binlog_row_metadata=FULL; without them the binlog
// columns must be the probed columns, in order.
func (d *decoder) layout(t *cdc.Table, tm *replication.TableMapEvent) (*layout, error) {
	if l := d.maps[tm]; l != nil {
		return l, nil
	}
	l := &layout{t: t, idx: make([]int, tm.ColumnCount), enums: tm.EnumStrValueMap(), sets: tm.SetStrValueMap(), fixed: fixedLengths(tm)}
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
	d.maps[tm] = l
	return l, nil
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
// read refuses fails it.
func (l *layout) row(image []any) ([]any, error) {
	row := make([]any, len(l.t.Columns))
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
		row[col] = l.value(i, col, v)
	}
	return row, nil
}

// value maps one binlog value (binlog column i, table column col) to what
// the mysql route's decoder makes of the same value read by SELECT: ENUM
// (an index) and SET (a bit mask) become their labels, text as string,
// binary as []byte, tinyint(1) and bit(1) as bool, bit(n) as uint64.
// Decimals, dates and times arrive as the text the bulk read parses.
func (l *layout) value(i, col int, v any) any {
	if v == nil {
		return nil
	}
	if labels, ok := l.enums[i]; ok {
		return enumLabel(labels, v)
	}
	if labels, ok := l.sets[i]; ok {
		return setLabels(labels, v)
	}
	var typ arrow.DataType
	if info := l.t.Info; info != nil {
		typ = info.Columns[col].Type
	}
	switch typ.(type) {
	case *arrow.StringType, *arrow.LargeStringType:
		if b, ok := v.([]byte); ok {
			return string(b)
		}
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		var b []byte
		switch x := v.(type) {
		case string:
			b = []byte(x)
		case []byte:
			b = x
		default:
			return v
		}
		if n := l.fixed[i]; len(b) < n { // BINARY(n): put back the stripped 0x00 padding
			b = append(make([]byte, 0, n), b...)[:n]
		}
		return b
	case *arrow.BooleanType:
		return asInt(v) != 0
	case *arrow.Uint64Type:
		return uint64(asInt(v))
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
