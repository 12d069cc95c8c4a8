package postgres

import (
	"bytes"
	"encoding/binary"
	"sync/atomic"
	"testing"
)

// copyBinary builds a binary COPY stream of rows (nil is NULL).
func copyBinary(ext []byte, rows [][][]byte) []byte {
	var b bytes.Buffer
	b.WriteString("PGCOPY\n\377\r\n\x00")
	binary.Write(&b, binary.BigEndian, uint32(0))
	binary.Write(&b, binary.BigEndian, uint32(len(ext)))
	b.Write(ext)
	for _, r := range rows {
		binary.Write(&b, binary.BigEndian, int16(len(r)))
		for _, f := range r {
			if f == nil {
				binary.Write(&b, binary.BigEndian, int32(-1))
				continue
			}
			binary.Write(&b, binary.BigEndian, int32(len(f)))
			b.Write(f)
		}
	}
	binary.Write(&b, binary.BigEndian, int16(-1))
	return b.Bytes()
}

// TestTupleCounter: the count is exact whatever the chunking, with NULLs,
// empty values, a zero-field tuple, a header extension and values that
// look like a trailer.
func TestTupleCounter(t *testing.T) {
	big := bytes.Repeat([]byte{0xff}, 70000)
	rows := [][][]byte{
		{[]byte("a"), nil, {}},
		{},
		{big, []byte{0xff, 0xff}},
		{nil},
		{[]byte{0xff, 0xff, 0xff, 0xff}, []byte("xyz")},
	}
	for _, ext := range [][]byte{nil, []byte("ext")} {
		data := copyBinary(ext, rows)
		for _, chunk := range []int{1, 2, 3, 5, 19, 20, 4096, len(data)} {
			var n atomic.Int64
			tc := &tupleCounter{rows: &n}
			for p := data; len(p) > 0; {
				k := min(chunk, len(p))
				if w, err := tc.Write(p[:k]); w != k || err != nil {
					t.Fatalf("Write = %d, %v", w, err)
				}
				p = p[k:]
			}
			if n.Load() != int64(len(rows)) {
				t.Errorf("ext %q chunk %d: counted %d tuples, want %d", ext, chunk, n.Load(), len(rows))
			}
		}
	}
}
