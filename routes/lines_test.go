package routes

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestLines_ReadsEveryLineOnceInOrder: whatever the reader's buffer size
// (one byte, odd sizes, larger than a block) and whatever the lines' sizes
// (empty, tiny, larger than a block), the bytes read are the lines in
// order, each once, then io.EOF.
func TestLines_ReadsEveryLineOnceInOrder(t *testing.T) {
	sizes := []int{0, 1, 3, 100, linesBlock - 1, linesBlock, linesBlock + 1, 3 * linesBlock}
	for _, n := range []int{0, 1, 2, 17, 1000} {
		for _, rd := range []int{1, 7, 4096, linesBlock + 3} {
			if n == 1000 && rd == 1 {
				continue // the same paths as 17 lines, a million calls slower
			}
			t.Run(fmt.Sprintf("%d lines, reads of %d", n, rd), func(t *testing.T) {
				line := func(b []byte, i int) []byte {
					size := sizes[i%len(sizes)]
					b = fmt.Appendf(b, "%d:", i)
					return append(append(b, strings.Repeat("x", size)...), '\n')
				}
				var want []byte
				for i := range n {
					want = line(want, i)
				}
				r := NewLines(n, line)
				var got bytes.Buffer
				p := make([]byte, rd)
				for {
					k, err := r.Read(p)
					got.Write(p[:k])
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if k == 0 {
						t.Fatal("Read returned 0 bytes and no error")
					}
				}
				if !bytes.Equal(got.Bytes(), want) {
					t.Fatalf("read %d bytes, want %d (or different content)", got.Len(), len(want))
				}
				if k, err := r.Read(p); k != 0 || err != io.EOF {
					t.Fatalf("after the end: %d, %v; want 0, EOF", k, err)
				}
			})
		}
	}
}
