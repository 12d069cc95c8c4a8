package postgres

import (
	"encoding/binary"
	"sync/atomic"
)

// tupleCounter counts the tuples of a binary COPY stream as its bytes pass
// by (PostgreSQL's COPY OUT reports its row count only at the end), for the
// progress line of a passthrough. It parses the header, each tuple's field
// count and each field's length, and skips the field data.
type tupleCounter struct {
	rows   *atomic.Int64
	state  int
	skip   int64    // field or extension bytes still to pass
	buf    [19]byte // the integer (or header) being read
	have   int      // bytes of it in buf
	fields int      // fields left in the current tuple
}

const (
	tcHeader = iota // 11-byte signature, flags, extension length
	tcCount         // int16 field count; -1 is the trailer
	tcLen           // int32 field length; -1 is NULL
	tcDone
)

// need is how many bytes the current state's integer takes.
func (t *tupleCounter) need() int {
	switch t.state {
	case tcHeader:
		return 19
	case tcCount:
		return 2
	}
	return 4
}

// Write never fails: the bytes are only observed.
func (t *tupleCounter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && t.state != tcDone {
		if t.skip > 0 {
			k := int(min(t.skip, int64(len(p))))
			t.skip -= int64(k)
			p = p[k:]
			continue
		}
		need := t.need()
		var v []byte
		if t.have == 0 && len(p) >= need {
			v, p = p[:need], p[need:]
		} else {
			k := copy(t.buf[t.have:need], p)
			t.have += k
			p = p[k:]
			if t.have < need {
				break
			}
			v, t.have = t.buf[:need], 0
		}
		t.step(v)
	}
	return n, nil
}

func (t *tupleCounter) step(v []byte) {
	switch t.state {
	case tcHeader:
		t.skip = int64(binary.BigEndian.Uint32(v[15:19]))
		t.state = tcCount
	case tcCount:
		f := int16(binary.BigEndian.Uint16(v))
		if f < 0 {
			t.state = tcDone
			return
		}
		t.rows.Add(1)
		if t.fields = int(f); t.fields > 0 {
			t.state = tcLen
		}
	case tcLen:
		if l := int32(binary.BigEndian.Uint32(v)); l > 0 {
			t.skip = int64(l)
		}
		if t.fields--; t.fields == 0 {
			t.state = tcCount
		}
	}
}
