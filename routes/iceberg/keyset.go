package iceberg

import (
	"hash/maphash"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// keySet remembers the merge keys a run has written, to refuse a key the
// run brings twice (routes.RepeatedKey): both rows would stay, the
// equality deletes retire only older rows. It keeps 128 bits per key (two
// hashes under random seeds: a false repeat is as likely as guessing
// them), about 50 bytes per row of the merge in memory.
type keySet struct {
	mu      sync.Mutex
	s1, s2  maphash.Seed
	seen    map[[2]uint64]struct{}
	example string // the first key seen twice, rendered
}

func newKeySet() *keySet {
	return &keySet{s1: maphash.MakeSeed(), s2: maphash.MakeSeed(), seen: map[[2]uint64]struct{}{}}
}

// add records the keys of a batch of key columns; it returns false once
// any key was seen before (example names it).
func (ks *keySet) add(keys arrow.RecordBatch) bool {
	var enc []byte
	ks.mu.Lock()
	defer ks.mu.Unlock()
	for i := range int(keys.NumRows()) {
		enc = enc[:0]
		for _, col := range keys.Columns() {
			v := col.ValueStr(i) // exact text of the value; keys are never NULL (required)
			enc = strconv.AppendInt(enc, int64(len(v)), 10)
			enc = append(enc, ':')
			enc = append(enc, v...)
		}
		h := [2]uint64{maphash.Bytes(ks.s1, enc), maphash.Bytes(ks.s2, enc)}
		if _, dup := ks.seen[h]; dup {
			vals := make([]string, keys.NumCols())
			for j, col := range keys.Columns() {
				vals[j] = col.ValueStr(i)
			}
			ks.example = strings.Join(vals, ", ")
			return false
		}
		ks.seen[h] = struct{}{}
	}
	return true
}
