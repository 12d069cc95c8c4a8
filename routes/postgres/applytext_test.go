package postgres

import (
	"crypto/md5"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/weirhq/weir/cdc"
)

// copyEscapeRef is COPY text's escaping, written the obvious way.
var copyEscapeRef = strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`, "\t", `\t`)

// TestAppendCopyEscaped: every byte value, alone and at each position of
// strings 0–40 bytes long (across the 8-byte words the scan reads), and
// texts with several escapes, escape as COPY text's rules say.
func TestAppendCopyEscaped(t *testing.T) {
	var cases []string
	for c := range 256 {
		for n := range 41 {
			for _, pos := range []int{0, n / 2, n - 1} {
				if n == 0 && pos != 0 {
					continue
				}
				b := []byte(strings.Repeat("a", n))
				if n > 0 {
					b[pos] = byte(c)
				}
				cases = append(cases, string(b))
			}
		}
	}
	cases = append(cases, "", `\`, "a\tb\nc\rd\\e", strings.Repeat("x\t", 20), "\x00\x01\x08\x0b\x0c\x0e\x5b\x5d\xff", "héllo wörld\t✓ 日本語\\")
	for _, s := range cases {
		if got, want := string(appendCopyEscaped([]byte("p"), s)), "p"+copyEscapeRef.Replace(s); got != want {
			t.Fatalf("appendCopyEscaped(%q) = %q, want %q", s, got, want)
		}
	}
}

// BenchmarkAppendUpsert: one staged upsert of bench/cdc.sh's 15-column
// row, as the WAL sends it (text) and as the binlog does (typed).
func BenchmarkAppendUpsert(b *testing.B) {
	cols := make([]string, 15)
	wal, typed := make([]any, 15), make([]any, 15)
	for i := range cols {
		cols[i] = "c" + strconv.Itoa(i)
		sum := md5.Sum([]byte(strconv.Itoa(i)))
		switch {
		case i == 0:
			wal[i], typed[i] = "123456", int64(123456)
		case i%2 == 1:
			wal[i], typed[i] = strconv.Itoa(23456+i), int32(23456+i)
		default:
			wal[i], typed[i] = hex.EncodeToString(sum[:]), hex.EncodeToString(sum[:])
		}
	}
	tbl := &cdc.Table{Columns: cols, Key: []int{0}}
	for _, c := range []struct {
		name string
		row  []any
	}{{"wal", wal}, {"typed", typed}} {
		b.Run(c.name, func(b *testing.B) {
			u := &cdc.Upsert{Row: c.row, Origin: c.row[:1]}
			buf := make([]byte, 0, 4096)
			for range b.N {
				buf, _ = appendUpsert(buf[:0], tbl, u)
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}
