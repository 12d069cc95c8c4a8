package routes

import "io"

// Lines streams n lines of a bulk-load text format (PostgreSQL's COPY
// text, MySQL's LOAD DATA) to the driver that reads it: each Read renders
// the next lines (line appends line i to b) into a buffer of about
// linesBlock bytes. A CDC chunk's rows are never rendered whole: the one
// growing buffer per chunk they used to be rendered into (20,000 rows, 8
// MB at 15 columns) cost a fifth of a run's CPU in its regrowth and
// clearing, and held the chunk twice (bench/README.md, Batch CDC).
type Lines struct {
	n, next int
	line    func(b []byte, i int) []byte
	buf     []byte
	off     int
}

const linesBlock = 64 << 10

// NewLines returns the reader of lines 0..n-1.
func NewLines(n int, line func(b []byte, i int) []byte) *Lines {
	return &Lines{n: n, line: line}
}

func (r *Lines) Read(p []byte) (int, error) {
	for r.off == len(r.buf) {
		if r.next == r.n {
			return 0, io.EOF
		}
		if r.buf == nil {
			r.buf = make([]byte, 0, linesBlock+linesBlock/4)
		}
		r.buf, r.off = r.buf[:0], 0
		for r.next < r.n && len(r.buf) < linesBlock {
			r.buf = r.line(r.buf, r.next)
			r.next++
		}
	}
	n := copy(p, r.buf[r.off:])
	r.off += n
	return n, nil
}

// CountingWriter counts the bytes written through it to W: what a body or
// a file holds so far.
type CountingWriter struct {
	W io.Writer
	N int64
}

func (c *CountingWriter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}
