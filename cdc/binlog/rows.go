package binlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// A rows event's images are decoded here, on the fold's goroutine, from
// the event's bytes: the syncer only decodes the event's header (rawRows)
// and leaves the rest as it came. go-mysql's decode of the images (the
// reference: replication.RowsEvent.decodeImage and decodeValue) built a
// []any per image, a signedness map per image and an interface box per
// value, and weir then converted every value a second time (layout.value):
// that was a third of a 15-column binlog run's CPU (bench/README.md, issue
// 25). fastRows decodes the common column types (integers, floats, YEAR,
// text and binary strings, blobs, ENUM, SET) straight into what the bulk
// read gives, boxed without an allocation per value; a table with any
// other column type (decimals, dates and times, JSON, BIT, …) or a
// compressed event is decoded by go-mysql as before (slowRows).

// pending is a rows event whose images are not decoded yet: the event's
// data after its header (pos), which the syncer's packet owns and nothing
// writes again. rawRows leaves it as the event's only value, Rows[0][0].
type pending struct {
	data []byte
	pos  int
}

// rawRows is the binlog syncer's rows event decoder: the header only (the
// table map, the column bitmaps), the images kept for the fold.
func rawRows(e *replication.RowsEvent, data []byte) error {
	pos, err := e.DecodeHeader(data)
	if err != nil {
		return err
	}
	e.Rows = [][]any{{pending{data: data, pos: pos}}}
	return nil
}

// pendingOf returns the undecoded images rawRows left in e.
func pendingOf(e *replication.RowsEvent) (pending, bool) {
	if len(e.Rows) != 1 || len(e.Rows[0]) != 1 {
		return pending{}, false
	}
	p, ok := e.Rows[0][0].(pending)
	return p, ok
}

// compressed reports MariaDB's compressed rows events, whose images
// go-mysql inflates (slowRows).
func compressed(t replication.EventType) bool {
	switch t {
	case replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1, replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1, replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1:
		return true
	}
	return false
}

// slowRows decodes e's images with go-mysql, against the layout's copy of
// the table map without the signedness bitmap (signed): go-mysql builds a
// map from it for every row image; the layout unsigns the integers
// (convUnsigned) from the real table map instead.
func (l *layout) slowRows(e *replication.RowsEvent, p pending) error {
	tm := e.Table
	e.Table = l.signed
	err := e.DecodeData(p.pos, p.data)
	e.Table = tm
	return err
}

// fast is how fastRows reads one binlog column's value.
type fast byte

const (
	fastNone   fast = iota // not a fast type: the table's events are decoded by go-mysql
	fastInt                // a little-endian integer of width bytes, signed
	fastFloat              // FLOAT
	fastDouble             // DOUBLE
	fastYear               // YEAR: one byte, 0 or the year - 1900
	fastString             // a length (width bytes) and the bytes: VARCHAR, CHAR, BINARY, BLOB, TEXT
	fastEnum               // an index of width bytes
	fastSet                // a bit mask of width bytes
)

// fastCol is one binlog column's decode: its kind and width.
type fastCol struct {
	kind  fast
	width int
}

// fastColumns works out each column's decode from the table map and the
// layout's conversions; ok is false when any column needs go-mysql's.
func fastColumns(tm *replication.TableMapEvent, convs []conv) (cols []fastCol, ok bool) {
	cols = make([]fastCol, len(convs))
	for i := range cols {
		c, kind := &cols[i], convs[i].kind
		typ, meta := tm.ColumnType[i], tm.ColumnMeta[i]
		if typ == gomysql.MYSQL_TYPE_STRING && meta >= 256 { // CHAR, BINARY, ENUM or SET: the real type in meta (decodeValue)
			b0, b1 := byte(meta>>8), int(meta&0xff)
			if b0&0x30 != 0x30 {
				typ, meta = b0|0x30, uint16(b1|int((b0&0x30)^0x30)<<4)
			} else {
				typ, meta = b0, uint16(b1)
			}
		}
		switch typ {
		case gomysql.MYSQL_TYPE_TINY, gomysql.MYSQL_TYPE_SHORT, gomysql.MYSQL_TYPE_INT24, gomysql.MYSQL_TYPE_LONG, gomysql.MYSQL_TYPE_LONGLONG:
			if kind == convAsIs || kind == convUnsigned || kind == convBool || kind == convUint64 {
				c.kind, c.width = fastInt, intWidth(typ)
			}
		case gomysql.MYSQL_TYPE_FLOAT, gomysql.MYSQL_TYPE_DOUBLE, gomysql.MYSQL_TYPE_YEAR:
			if kind == convAsIs {
				c.kind = map[byte]fast{gomysql.MYSQL_TYPE_FLOAT: fastFloat, gomysql.MYSQL_TYPE_DOUBLE: fastDouble, gomysql.MYSQL_TYPE_YEAR: fastYear}[typ]
			}
		case gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_VAR_STRING, gomysql.MYSQL_TYPE_STRING:
			if kind == convAsIs || kind == convString || kind == convBinary {
				c.kind, c.width = fastString, 1
				if meta >= 256 {
					c.width = 2
				}
			}
		case gomysql.MYSQL_TYPE_BLOB:
			if (kind == convAsIs || kind == convString || kind == convBinary) && meta >= 1 && meta <= 4 {
				c.kind, c.width = fastString, int(meta)
			}
		case gomysql.MYSQL_TYPE_ENUM:
			if kind == convEnum && (meta&0xff == 1 || meta&0xff == 2) {
				c.kind, c.width = fastEnum, int(meta&0xff)
			}
		case gomysql.MYSQL_TYPE_SET:
			if kind == convSet && meta&0xff >= 1 && meta&0xff <= 8 {
				c.kind, c.width = fastSet, int(meta&0xff)
			}
		}
		if c.kind == fastNone {
			return nil, false
		}
	}
	return cols, true
}

func intWidth(typ byte) int {
	switch typ {
	case gomysql.MYSQL_TYPE_TINY:
		return 1
	case gomysql.MYSQL_TYPE_SHORT:
		return 2
	case gomysql.MYSQL_TYPE_INT24:
		return 3
	case gomysql.MYSQL_TYPE_LONG:
		return 4
	}
	return 8
}

// slabs hands out the rows' value slices and the boxes' backing: a row
// image takes its []any, its strings' headers and its scalars from one
// larger allocation each instead of one per value. A slab lives as long as
// any row cut from it (a chunk of the window at most).
type slabs struct {
	anys    []any
	strs    []string
	scalars []uint64
}

const slabValues = 4096

func (s *slabs) row(n int) []any {
	if len(s.anys) < n {
		s.anys = make([]any, max(slabValues, n))
	}
	r := s.anys[:n:n]
	s.anys = s.anys[n:]
	return r
}

func (s *slabs) str(v string) any {
	if len(s.strs) == 0 {
		s.strs = make([]string, slabValues)
	}
	s.strs[0] = v
	b := box(stringType, unsafe.Pointer(&s.strs[0]))
	s.strs = s.strs[1:]
	return b
}

func (s *slabs) scalar() unsafe.Pointer {
	if len(s.scalars) == 0 {
		s.scalars = make([]uint64, slabValues)
	}
	p := unsafe.Pointer(&s.scalars[0])
	s.scalars = s.scalars[1:]
	return p
}

// eface is the runtime's layout of an empty interface (any): its type
// descriptor and a pointer to its value.
type eface struct{ typ, data unsafe.Pointer }

func typeOf(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

var (
	stringType  = typeOf("")
	int8Type    = typeOf(int8(0))
	int16Type   = typeOf(int16(0))
	int32Type   = typeOf(int32(0))
	int64Type   = typeOf(int64(0))
	uint8Type   = typeOf(uint8(0))
	uint16Type  = typeOf(uint16(0))
	uint32Type  = typeOf(uint32(0))
	uint64Type  = typeOf(uint64(0))
	intType     = typeOf(0)
	float32Type = typeOf(float32(0))
	float64Type = typeOf(float64(0))
)

// box returns the value at p, of the type typ, as an any that points at
// it: any(v) allocates a copy per value. *p must not change afterwards.
func box(typ, p unsafe.Pointer) any {
	var v any
	*(*eface)(unsafe.Pointer(&v)) = eface{typ: typ, data: p}
	return v
}

// fastRows decodes every image of e, calling add with each change's
// images (after is nil but for updates).
// The before images of updates and deletes take their values from slabs
// of their own (l.before): the fold keeps their keys but not their rows,
// and a slab shared with the rows it keeps held the dead rows as long, for
// the collector to trace (a 15-column update-only run).
func (l *layout) fastRows(e *replication.RowsEvent, p pending, update bool, add func(first, after []any) error) error {
	data := p.data[p.pos:]
	firstSlabs := &l.slabs
	if e.Type() != replication.EnumRowsEventTypeInsert {
		firstSlabs = &l.before
	}
	for len(data) > 0 {
		first, n, err := l.image(data, e.ColumnBitmap1, firstSlabs)
		if err != nil {
			return err
		}
		data = data[n:]
		var after []any
		if update {
			if after, n, err = l.image(data, e.ColumnBitmap2, &l.slabs); err != nil {
				return err
			}
			data = data[n:]
		}
		if err := add(first, after); err != nil {
			return err
		}
	}
	return nil
}

var errShort = errors.New("the event ends inside a row image")

// image decodes one row image (the columns in bitmap, a null bitmap, the
// values) into a row of the table's columns, and returns the bytes it read.
func (l *layout) image(data, bitmap []byte, s *slabs) (row []any, n int, err error) {
	cols := len(l.fast)
	if len(bitmap) < (cols+7)/8 {
		return nil, 0, fmt.Errorf("rows event of %s: %w", l.t.Source, errShort)
	}
	present := 0
	for _, b := range bitmap[:(cols+7)/8] {
		present += bits.OnesCount8(b)
	}
	if cols%8 != 0 { // bits past the last column
		present -= bits.OnesCount8(bitmap[cols/8] &^ byte(1<<(cols%8)-1))
	}
	nulls := (present + 7) / 8
	if len(data) < nulls {
		return nil, 0, fmt.Errorf("rows event of %s: %w", l.t.Source, errShort)
	}
	nullBits, pos, ni := data[:nulls], nulls, 0
	row = s.row(len(l.t.Columns))
	for i := range cols {
		if bitmap[i>>3]&(1<<(i&7)) == 0 {
			continue
		}
		null := nullBits[ni>>3]&(1<<(ni&7)) != 0
		ni++
		if null {
			continue
		}
		fc, col := l.fast[i], l.idx[i]
		var v any
		var w int
		if v, w, err = l.fastValue(i, fc, data[pos:], s); err != nil {
			return nil, 0, fmt.Errorf("rows event of %s, column %s: %w", l.t.Source, l.t.Columns[col], err)
		}
		pos += w
		if l.check != nil && l.check.Checks(col) {
			if v, err = l.check.Check(col, v); err != nil {
				return nil, 0, err
			}
			if b, ok := v.(int8); ok && l.conv[i].kind == convBool { // tinyint(1), 0 or 1 (checked)
				v = b != 0
			}
		}
		row[col] = v
	}
	return row, pos, nil
}

// fastValue decodes binlog column i's value at the head of b into what
// layout.value makes of go-mysql's decode of it, and its length in bytes.
func (l *layout) fastValue(i int, fc fastCol, b []byte, s *slabs) (any, int, error) {
	c := &l.conv[i]
	switch fc.kind {
	case fastInt:
		if len(b) < fc.width {
			return nil, 0, errShort
		}
		var u uint64
		for k := fc.width - 1; k >= 0; k-- {
			u = u<<8 | uint64(b[k])
		}
		shift := 64 - 8*fc.width
		x := int64(u<<shift) >> shift // sign-extended
		p := s.scalar()
		switch c.kind {
		case convBool:
			if l.check != nil && l.check.Checks(l.idx[i]) {
				*(*int8)(p) = int8(x) // checked, then made a bool (image)
				return box(int8Type, p), fc.width, nil
			}
			return x != 0, fc.width, nil
		case convUint64:
			*(*uint64)(p) = uint64(x)
			return box(uint64Type, p), fc.width, nil
		case convUnsigned:
			switch fc.width {
			case 1:
				*(*uint8)(p) = uint8(u)
				return box(uint8Type, p), 1, nil
			case 2:
				*(*uint16)(p) = uint16(u)
				return box(uint16Type, p), 2, nil
			case 3, 4:
				*(*uint32)(p) = uint32(u)
				return box(uint32Type, p), fc.width, nil
			}
			*(*uint64)(p) = u
			return box(uint64Type, p), 8, nil
		}
		switch fc.width {
		case 1:
			*(*int8)(p) = int8(x)
			return box(int8Type, p), 1, nil
		case 2:
			*(*int16)(p) = int16(x)
			return box(int16Type, p), 2, nil
		case 3, 4:
			*(*int32)(p) = int32(x)
			return box(int32Type, p), fc.width, nil
		}
		*(*int64)(p) = x
		return box(int64Type, p), 8, nil
	case fastFloat:
		if len(b) < 4 {
			return nil, 0, errShort
		}
		p := s.scalar()
		*(*float32)(p) = math.Float32frombits(binary.LittleEndian.Uint32(b))
		return box(float32Type, p), 4, nil
	case fastDouble:
		if len(b) < 8 {
			return nil, 0, errShort
		}
		p := s.scalar()
		*(*float64)(p) = math.Float64frombits(binary.LittleEndian.Uint64(b))
		return box(float64Type, p), 8, nil
	case fastYear:
		if len(b) < 1 {
			return nil, 0, errShort
		}
		y := int(b[0])
		if y != 0 {
			y += 1900
		}
		p := s.scalar()
		*(*int)(p) = y
		return box(intType, p), 1, nil
	case fastString:
		if len(b) < fc.width {
			return nil, 0, errShort
		}
		var n int
		for k := fc.width - 1; k >= 0; k-- {
			n = n<<8 | int(b[k])
		}
		end := fc.width + n
		if n < 0 || len(b) < end {
			return nil, 0, errShort
		}
		v := b[fc.width:end:end]
		if c.kind == convBinary {
			if len(v) < c.fixed { // BINARY(n): put back the stripped 0x00 padding
				v = append(make([]byte, 0, c.fixed), v...)[:c.fixed]
			}
			return v, end, nil
		}
		if c.kind == convAsIs && l.tm.ColumnType[i] == gomysql.MYSQL_TYPE_BLOB {
			return v, end, nil // a BLOB go-mysql hands over as []byte
		}
		return s.str(unsafe.String(unsafe.SliceData(v), len(v))), end, nil
	case fastEnum:
		if len(b) < fc.width {
			return nil, 0, errShort
		}
		n := int64(b[0])
		if fc.width == 2 {
			n = int64(binary.LittleEndian.Uint16(b))
		}
		if n >= 1 && int(n) <= len(c.labels) {
			return s.str(c.labels[n-1]), fc.width, nil
		}
		return "", fc.width, nil // MySQL's invalid-value enum, index 0
	case fastSet:
		if len(b) < fc.width {
			return nil, 0, errShort
		}
		var mask uint64
		for k := fc.width - 1; k >= 0; k-- {
			mask = mask<<8 | uint64(b[k])
		}
		return setLabels(c.labels, int64(mask)), fc.width, nil
	}
	return nil, 0, fmt.Errorf("no fast decode for column type %d", l.tm.ColumnType[i])
}
