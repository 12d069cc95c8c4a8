package cdc

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/weirhq/weir/routes"
)

// TestChunk_WideRowsMoreChunksSameResult: with the default chunk policy
// (FlushChanges, FlushBytes), a window of 15-column rows flushes in more
// chunks than the same changes on 5 columns do, each chunk
// holding about the bytes a 5-column chunk holds, and both end as the
// source does: the changes replayed one by one, and the whole window
// applied as one chunk. The applier is simulated by the Applier contract
// (fill Unchanged from the destination by origin, TRUNCATE, deletes,
// upserts).
func TestChunk_WideRowsMoreChunksSameResult(t *testing.T) {
	const n = 60000
	type run struct {
		chunks   int
		maxBytes int
		dest     map[string][]any
	}
	apply := func(width int, whole bool) run {
		tbl := wideTable(width)
		w := NewWindow()
		dest := map[string][]any{}
		var r run
		w.flush = func() error {
			r.chunks++
			r.maxBytes = max(r.maxBytes, w.heldBytes)
			simApply(dest, w.Tables[tbl.Source.String()])
			return nil
		}
		if whole {
			w.flush = nil
		}
		for _, c := range wideChanges(width, n) {
			if err := w.Add(tbl, c); err != nil {
				t.Fatal(err)
			}
		}
		if tw := w.Tables[tbl.Source.String()]; tw != nil {
			simApply(dest, tw) // Finish's last flush
		}
		r.dest = dest
		return r
	}
	for _, width := range []int{5, 15} {
		src := replay(width, n)
		for _, whole := range []bool{false, true} {
			got := apply(width, whole).dest
			if len(got) != len(src) {
				t.Fatalf("%d columns, whole=%v: %d rows, source %d", width, whole, len(got), len(src))
			}
			for k, row := range src {
				if !reflect.DeepEqual(got[k], row) {
					t.Fatalf("%d columns, whole=%v: row %q = %v, source %v", width, whole, k, got[k], row)
				}
			}
		}
	}
	narrow, wide := apply(5, false), apply(15, false)
	if narrow.chunks != n/FlushChanges {
		t.Errorf("5 columns: %d chunks of %d changes, want %d (FlushChanges each)", narrow.chunks, n, n/FlushChanges)
	}
	if wide.chunks <= narrow.chunks+1 {
		t.Errorf("15 columns: %d chunks, 5 columns %d: want more (bounded by bytes)", wide.chunks, narrow.chunks)
	}
	if wide.maxBytes > FlushBytes+1024 || float64(wide.maxBytes) > 1.25*float64(narrow.maxBytes) {
		t.Errorf("15 columns hold %d estimated bytes a chunk, 5 columns %d, FlushBytes %d: want about the same", wide.maxBytes, narrow.maxBytes, FlushBytes)
	}
}

func wideTable(width int) *Table {
	cols := make([]string, width)
	for i := range cols {
		cols[i] = "c" + strconv.Itoa(i)
	}
	return &Table{Source: routes.TableRef{Schema: "s", Name: "wide"}, Columns: cols, Key: []int{0}}
}

// wideChanges makes n changes of bench/cdc.sh's row shape (a key, then
// alternating integers and 32-character text, all as pgoutput's text):
// inserts, whole-row and partial (Unchanged) updates, key changes,
// deletes and one TRUNCATE, the same sequence for every call.
func wideChanges(width, n int) []Change {
	rng := rand.New(rand.NewPCG(25, uint64(width)))
	live := []int{}
	next := 1
	row := func(id, gen int) []any {
		r := make([]any, width)
		r[0] = strconv.Itoa(id)
		for i := 1; i < width; i++ {
			if i%2 == 1 {
				r[i] = strconv.Itoa((id*7+gen)%100000 + i)
			} else {
				r[i] = fmt.Sprintf("%032x", uint64(id)*1e6+uint64(gen*31+i))
			}
		}
		return r
	}
	out := make([]Change, 0, n)
	for g := 0; len(out) < n; g++ {
		p := rng.IntN(100)
		switch {
		case g == n/2:
			out, live = append(out, Change{Op: OpTruncate}), live[:0]
		case len(live) < 10 || p < 45:
			out = append(out, Change{Op: OpInsert, After: row(next, g)})
			live = append(live, next)
			next++
		case p < 80: // an update, every third a partial one
			id := live[rng.IntN(len(live))]
			r := row(id, g)
			if g%3 == 0 {
				for i := 2; i < width; i += 3 {
					r[i] = Unchanged
				}
			}
			out = append(out, Change{Op: OpUpdate, After: r})
		case p < 90: // a key change
			j := rng.IntN(len(live))
			r := row(next, g)
			r[width-1] = Unchanged
			out = append(out, Change{Op: OpUpdate, Key: []any{strconv.Itoa(live[j])}, After: r})
			live[j] = next
			next++
		default:
			j := rng.IntN(len(live))
			out = append(out, Change{Op: OpDelete, Key: []any{strconv.Itoa(live[j])}})
			live[j] = live[len(live)-1]
			live = live[:len(live)-1]
		}
	}
	return out
}

// replay applies the changes one by one: the source's table.
func replay(width, n int) map[string][]any {
	src := map[string][]any{}
	for _, c := range wideChanges(width, n) {
		switch c.Op {
		case OpInsert:
			src[c.After[0].(string)] = c.After
		case OpUpdate:
			old := c.After[0].(string)
			if c.Key != nil {
				old = c.Key[0].(string)
			}
			prev := src[old]
			r := append([]any(nil), c.After...)
			for i, v := range r {
				if IsUnchanged(v) {
					r[i] = prev[i]
				}
			}
			delete(src, old)
			src[r[0].(string)] = r
		case OpDelete:
			delete(src, c.Key[0].(string))
		case OpTruncate:
			clear(src)
		}
	}
	return src
}

// simApply applies one chunk to dest (by the key's text) as an Applier
// does: fill Unchanged from dest by origin, TRUNCATE, deletes, upserts.
func simApply(dest map[string][]any, tw *TableWindow) {
	rows := make(map[string][]any, len(tw.Upserts))
	for k, u := range tw.Upserts {
		r := append([]any(nil), u.Row...)
		for i, v := range r {
			if IsUnchanged(v) {
				r[i] = dest[u.Origin[0].(string)][i]
			}
		}
		rows[k] = r
	}
	if tw.Truncated {
		clear(dest)
	}
	for _, key := range tw.Deletes {
		delete(dest, key[0].(string))
	}
	for _, r := range rows {
		dest[r[0].(string)] = r
	}
}
