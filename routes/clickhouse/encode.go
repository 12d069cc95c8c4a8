package clickhouse

import (
	"encoding/binary"
	"fmt"

	"github.com/ClickHouse/ch-go/proto"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// encoder writes Arrow arrays as one ClickHouse type: a whole array as a
// Native column (column), or value by value in RowBinary (bind). RowBinary
// values are Native values; only Nullable and Array are laid out
// differently (a flag or a length before each value).
type encoder interface {
	chType() string
	column(b *proto.Buffer, arr arrow.Array) error
	bind(arr arrow.Array) valueFunc
}

// valueFunc appends the RowBinary bytes of row i of the array it is bound to.
type valueFunc func(b []byte, i int) ([]byte, error)

// newEncoder returns the encoder writing Arrow type a as ClickHouse type typ.
func newEncoder(a arrow.DataType, typ string, o Options) (encoder, error) {
	t, err := parseType(typ)
	if err != nil {
		return nil, err
	}
	return buildEncoder(a, t, o)
}

func buildEncoder(a arrow.DataType, t chType, o Options) (encoder, error) {
	return buildEnc(a, t, o, true)
}

// buildEnc is buildEncoder; strict is false under Nullable, which writes the
// nulls itself.
func buildEnc(a arrow.DataType, t chType, o Options, strict bool) (encoder, error) {
	switch t.Name {
	case "Nullable":
		inner, err := buildEnc(a, *t.Elem, o, false)
		if err != nil {
			return nil, err
		}
		return nullableEnc{typ: "Nullable(" + inner.chType() + ")", inner: inner}, nil
	case "LowCardinality":
		// Sent as the plain type: the server converts on insert.
		return buildEnc(a, *t.Elem, o, strict)
	case "Array":
		return arrayEncoder(a, t, o)
	}
	if enc := scalarEncoder(a, t, o); enc != nil {
		if strict {
			return notNullEnc{enc}, nil
		}
		return enc, nil
	}
	return nil, fmt.Errorf("cannot write arrow %s as ClickHouse %s", a, t.raw)
}

// notNullEnc refuses a NULL for a column that is not Nullable: the scalar
// encoders would write the null slot's bytes (0, "", or garbage).
type notNullEnc struct{ encoder }

func (e notNullEnc) column(b *proto.Buffer, arr arrow.Array) error {
	if n := arr.NullN(); n > 0 {
		return fmt.Errorf("%d NULLs for ClickHouse %s, which is not Nullable (make the column Nullable, or the source NOT NULL)", n, e.chType())
	}
	return e.encoder.column(b, arr)
}

func (e notNullEnc) bind(arr arrow.Array) valueFunc {
	inner := e.encoder.bind(arr)
	return func(b []byte, i int) ([]byte, error) {
		if arr.IsNull(i) {
			return b, fmt.Errorf("NULL for ClickHouse %s, which is not Nullable (make the column Nullable, or the source NOT NULL)", e.chType())
		}
		return inner(b, i)
	}
}

// nullableEnc: a null map (1 = NULL) before the values; RowBinary puts the
// flag before each value and omits NULL values.
type nullableEnc struct {
	typ   string
	inner encoder
}

func (e nullableEnc) chType() string { return e.typ }

func (e nullableEnc) column(b *proto.Buffer, arr arrow.Array) error {
	for i := 0; i < arr.Len(); i++ {
		b.Buf = append(b.Buf, boolByte(arr.IsNull(i)))
	}
	return e.inner.column(b, arr)
}

func (e nullableEnc) bind(arr arrow.Array) valueFunc {
	inner := e.inner.bind(arr)
	return func(b []byte, i int) ([]byte, error) {
		if arr.IsNull(i) {
			return append(b, 1), nil
		}
		return inner(append(b, 0), i)
	}
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// arrayEnc: cumulative UInt64 end offsets, then every element as one
// column. ClickHouse has no Nullable(Array): a NULL list lands as [].
type arrayEnc struct {
	typ   string
	inner encoder
}

func arrayEncoder(a arrow.DataType, t chType, o Options) (encoder, error) {
	lt, ok := a.(arrow.ListLikeType)
	if !ok {
		return nil, fmt.Errorf("cannot write arrow %s as ClickHouse %s", a, t.raw)
	}
	inner, err := buildEncoder(lt.Elem(), *t.Elem, o)
	if err != nil {
		return nil, err
	}
	return arrayEnc{typ: "Array(" + inner.chType() + ")", inner: inner}, nil
}

func (e arrayEnc) chType() string { return e.typ }

func (e arrayEnc) column(b *proto.Buffer, arr arrow.Array) error {
	l := arr.(array.ListLike)
	if arr.Len() == 0 {
		return nil
	}
	first, _ := l.ValueOffsets(0)
	last := first
	for i := 0; i < l.Len(); i++ {
		s, end := l.ValueOffsets(i)
		if l.IsNull(i) && end > s {
			return fmt.Errorf("a NULL list holds %d elements: not supported", end-s)
		}
		last = end
		b.PutUInt64(uint64(end - first))
	}
	child := array.NewSlice(l.ListValues(), first, last)
	defer child.Release()
	return e.inner.column(b, child)
}

func (e arrayEnc) bind(arr arrow.Array) valueFunc {
	l := arr.(array.ListLike)
	inner := e.inner.bind(l.ListValues())
	return func(b []byte, i int) ([]byte, error) {
		s, end := l.ValueOffsets(i)
		if l.IsNull(i) {
			end = s
		}
		b = binary.AppendUvarint(b, uint64(end-s))
		var err error
		for j := s; j < end && err == nil; j++ {
			b, err = inner(b, int(j))
		}
		return b, err
	}
}

// memEnc copies fixed-width values whose Arrow layout is the ClickHouse
// one (little-endian integers and floats, Date32, FixedString).
type memEnc struct {
	typ   string
	width int
}

func (e memEnc) chType() string { return e.typ }

func (e memEnc) column(b *proto.Buffer, arr arrow.Array) error {
	off, n := arr.Data().Offset(), arr.Len()
	b.Buf = append(b.Buf, valueBytes(arr)[off*e.width:(off+n)*e.width]...)
	return nil
}

func (e memEnc) bind(arr arrow.Array) valueFunc {
	vals, off := valueBytes(arr), arr.Data().Offset()
	return func(b []byte, i int) ([]byte, error) {
		return append(b, vals[(off+i)*e.width:(off+i+1)*e.width]...), nil
	}
}

// valueBytes is the values buffer of a fixed-width array.
func valueBytes(arr arrow.Array) []byte {
	if buf := arr.Data().Buffers()[1]; buf != nil {
		return buf.Bytes()
	}
	return nil
}

// scalarEnc encodes value by value through the function bind returns.
type scalarEnc struct {
	typ    string
	bindFn func(arr arrow.Array) valueFunc
}

func (e scalarEnc) chType() string                 { return e.typ }
func (e scalarEnc) bind(arr arrow.Array) valueFunc { return e.bindFn(arr) }

func (e scalarEnc) column(b *proto.Buffer, arr arrow.Array) error {
	f := e.bindFn(arr)
	var err error
	for i := 0; i < arr.Len(); i++ {
		if b.Buf, err = f(b.Buf, i); err != nil {
			return err
		}
	}
	return nil
}

// storageEnc encodes an extension array's storage.
type storageEnc struct{ inner encoder }

func storage(arr arrow.Array) arrow.Array {
	if x, ok := arr.(array.ExtensionArray); ok {
		return x.Storage()
	}
	return arr
}

func (e storageEnc) chType() string { return e.inner.chType() }
func (e storageEnc) column(b *proto.Buffer, arr arrow.Array) error {
	return e.inner.column(b, storage(arr))
}
func (e storageEnc) bind(arr arrow.Array) valueFunc { return e.inner.bind(storage(arr)) }
