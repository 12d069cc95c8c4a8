package clickhouse

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// decimalWidth is the byte width ClickHouse stores Decimal(P, S) in.
func decimalWidth(p int) int {
	switch {
	case p <= 9:
		return 4
	case p <= 18:
		return 8
	case p <= 38:
		return 16
	}
	return 32
}

// words is a decimal's unscaled value as 256-bit two's complement,
// least significant word first.
type words = [4]uint64

func signExtend(lo uint64, hi int64) words {
	ext := uint64(0)
	if hi < 0 {
		ext = ^uint64(0)
	}
	return words{lo, uint64(hi), ext, ext}
}

func decimalEncoder(a arrow.DataType, t chType) encoder {
	dt, ok := a.(arrow.DecimalType)
	if !ok {
		return nil
	}
	p, s := decimalParams(t)
	get := decimalGetter(a.ID(), dt.GetScale(), int32(s))
	if get == nil {
		return nil
	}
	width := decimalWidth(p)
	return scalarEnc{t.raw, func(arr arrow.Array) valueFunc { return bindDecimal(arr, get(arr), width) }}
}

// decimalGetter reads decimals of any width as words at the destination
// scale; only decimal128 is rescaled (it refuses to drop digits).
func decimalGetter(id arrow.Type, from, to int32) func(arrow.Array) func(int) (words, error) {
	if from != to && id != arrow.DECIMAL128 {
		return nil
	}
	switch id {
	case arrow.DECIMAL32:
		return func(arr arrow.Array) func(int) (words, error) {
			d := arr.(*array.Decimal32)
			return func(i int) (words, error) { v := int64(d.Value(i)); return signExtend(uint64(v), v>>63), nil }
		}
	case arrow.DECIMAL64:
		return func(arr arrow.Array) func(int) (words, error) {
			d := arr.(*array.Decimal64)
			return func(i int) (words, error) { v := int64(d.Value(i)); return signExtend(uint64(v), v>>63), nil }
		}
	case arrow.DECIMAL128:
		return func(arr arrow.Array) func(int) (words, error) {
			d := arr.(*array.Decimal128)
			return func(i int) (words, error) {
				n, err := d.Value(i).Rescale(from, to)
				return signExtend(n.LowBits(), n.HighBits()), err
			}
		}
	case arrow.DECIMAL256:
		return func(arr arrow.Array) func(int) (words, error) {
			d := arr.(*array.Decimal256)
			return func(i int) (words, error) { return d.Value(i).Array(), nil }
		}
	}
	return nil
}

// bindDecimal writes the low width bytes of the two's complement value:
// the destination precision equals the source's, so the value fits.
func bindDecimal(arr arrow.Array, get func(int) (words, error), width int) valueFunc {
	return func(b []byte, i int) ([]byte, error) {
		var w words
		if arr.IsValid(i) {
			var err error
			if w, err = get(i); err != nil {
				return b, err
			}
		}
		if width == 4 {
			return binary.LittleEndian.AppendUint32(b, uint32(w[0])), nil
		}
		for k := 0; k < width/8; k++ {
			b = binary.LittleEndian.AppendUint64(b, w[k])
		}
		return b, nil
	}
}
