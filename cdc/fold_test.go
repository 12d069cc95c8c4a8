package cdc

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
)

func testTable() *Table {
	return &Table{Source: routes.TableRef{Schema: "s", Name: "t"}, Columns: []string{"id", "a", "big"}, Key: []int{0}}
}

func TestWindow_Add(t *testing.T) {
	tbl := testTable()
	tests := []struct {
		name    string
		changes []Change
		upserts map[string][]any // encoded key → row
		deletes []string
		trunc   bool
	}{
		{"insert then update folds to one upsert",
			[]Change{{Op: OpInsert, After: []any{"1", "a", "x"}}, {Op: OpUpdate, After: []any{"1", "b", Unchanged}}},
			map[string][]any{k("1"): {"1", "b", "x"}}, nil, false},
		{"insert then delete leaves a delete",
			[]Change{{Op: OpInsert, After: []any{"1", "a", "x"}}, {Op: OpDelete, Key: []any{"1"}}},
			map[string][]any{}, []string{k("1")}, false},
		{"key change deletes the old key",
			[]Change{{Op: OpUpdate, Key: []any{"1"}, After: []any{"2", "a", Unchanged}}},
			map[string][]any{k("2"): {"2", "a", Unchanged}}, []string{k("1")}, false},
		{"truncate discards what came before",
			[]Change{{Op: OpInsert, After: []any{"1", "a", "x"}}, {Op: OpTruncate}, {Op: OpInsert, After: []any{"3", "c", "z"}}},
			map[string][]any{k("3"): {"3", "c", "z"}}, nil, true},
		{"delete then insert is an upsert",
			[]Change{{Op: OpDelete, Key: []any{"1"}}, {Op: OpInsert, After: []any{"1", "a", "x"}}},
			map[string][]any{k("1"): {"1", "a", "x"}}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWindow()
			for _, c := range tt.changes {
				if err := w.Add(tbl, c); err != nil {
					t.Fatal(err)
				}
			}
			tw := w.Tables["s.t"]
			if tw.Truncated != tt.trunc {
				t.Errorf("truncated = %v, want %v", tw.Truncated, tt.trunc)
			}
			checkUpserts(t, tw, tt.upserts)
			if len(tw.Deletes) != len(tt.deletes) {
				t.Fatalf("deletes = %v, want %v", tw.Deletes, tt.deletes)
			}
			for _, d := range tt.deletes {
				if _, ok := tw.Deletes[d]; !ok {
					t.Errorf("missing delete %s", d)
				}
			}
		})
	}
}

func TestWindow_AddKeyChangeKeepsOrigin(t *testing.T) {
	w := NewWindow()
	tbl := testTable()
	w.Add(tbl, Change{Op: OpUpdate, Key: []any{"1"}, After: []any{"2", "a", Unchanged}})
	w.Add(tbl, Change{Op: OpUpdate, Key: []any{"2"}, After: []any{"3", "b", Unchanged}})
	up := w.Tables["s.t"].Upserts[k("3")]
	if up == nil || up.Origin[0] != "1" || !up.Partial() {
		t.Fatalf("upsert = %+v, want origin 1 and partial", up)
	}
	if n := len(w.Tables["s.t"].Deletes); n != 2 {
		t.Errorf("deletes = %d, want 2 (keys 1 and 2)", n)
	}
}

func k(v string) string { return encodeKey([]any{v}) }

func checkUpserts(t *testing.T, tw *TableWindow, want map[string][]any) {
	t.Helper()
	if len(tw.Upserts) != len(want) {
		t.Fatalf("upserts = %d, want %d", len(tw.Upserts), len(want))
	}
	for key, row := range want {
		got := tw.Upserts[key]
		if got == nil {
			t.Fatalf("missing upsert %s", key)
		}
		for i := range row {
			if got.Row[i] != row[i] {
				t.Errorf("%s col %d = %v, want %v", key, i, got.Row[i], row[i])
			}
		}
	}
}

// TestWindow_Flush: an opened window hands each chunk of FlushChanges
// changes over folded, then holds nothing of it (memory is one chunk);
// a chunk after a key change keeps the new key's origin for what it
// cannot fill (the destination holds the earlier chunk's row by then);
// the counts go on across chunks.
func TestWindow_Flush(t *testing.T) {
	old := FlushChanges
	FlushChanges = 2
	t.Cleanup(func() { FlushChanges = old })
	tbl := testTable()
	w := NewWindow()
	type chunk struct {
		upserts, deletes int
		trunc            bool
		origin           []any // of key 2's upsert, if any
	}
	var chunks []chunk
	w.flush = func() error {
		tw := w.Tables["s.t"]
		c := chunk{upserts: len(tw.Upserts), deletes: len(tw.Deletes), trunc: tw.Truncated}
		if u := tw.Upserts[k("2")]; u != nil {
			c.origin = u.Origin
		}
		chunks = append(chunks, c)
		return nil
	}
	for _, c := range []Change{
		{Op: OpInsert, After: []any{"1", "a", "x"}},
		{Op: OpUpdate, Key: []any{"1"}, After: []any{"2", "b", Unchanged}}, // chunk 1: delete 1, upsert 2 from 1
		{Op: OpUpdate, After: []any{"2", "c", Unchanged}},
		{Op: OpTruncate}, // chunk 2: truncate only (the update is discarded)
		{Op: OpInsert, After: []any{"3", "d", "z"}},
	} {
		if err := w.Add(tbl, c); err != nil {
			t.Fatal(err)
		}
	}
	want := []chunk{{1, 1, false, []any{"1"}}, {0, 0, true, nil}}
	if fmt.Sprint(chunks) != fmt.Sprint(want) {
		t.Fatalf("chunks %v, want %v", chunks, want)
	}
	tw := w.Tables["s.t"]
	if len(tw.Upserts) != 1 || tw.Truncated || len(tw.Deletes) != 0 {
		t.Fatalf("held after two chunks: %+v, want the one insert", tw)
	}
	var res Result
	res.Count(w)
	if res.Changes != 5 || res.Upserts != 2 || res.Deletes != 1 || res.Truncates != 1 {
		t.Errorf("count = %+v, want 5 changes, 2 upserts, 1 delete, 1 truncate", res)
	}
}

// TestWindow_FlushBytes: a window hands its chunk over once the rows it
// holds reach FlushBytes, long before FlushChanges wide rows: memory is
// bounded by bytes as well as by count, in both modes.
func TestWindow_FlushBytes(t *testing.T) {
	oldN, oldB := FlushChanges, FlushBytes
	FlushChanges, FlushBytes = 1000, 1<<20
	t.Cleanup(func() { FlushChanges, FlushBytes = oldN, oldB })
	wide := strings.Repeat("x", 300<<10)
	for _, w := range []*Window{NewWindow(), NewLogWindow()} {
		flushes := 0
		w.flush = func() error { flushes++; return nil }
		for i := range 10 {
			if err := w.Add(testTable(), Change{Op: OpInsert, After: []any{fmt.Sprint(i), wide, "x"}}); err != nil {
				t.Fatal(err)
			}
		}
		// 4 rows of 300 KiB reach 1 MiB: flushes after rows 4 and 8
		if flushes != 2 {
			t.Errorf("log=%v: %d flushes of 10 rows of 300 KiB with FlushBytes 1 MiB, want 2", w.Log, flushes)
		}
	}
}

// TestEncodeKey_DistinctExactlyWhenValuesDiffer: two keys encode the same
// exactly when they hold the same values of the same Go types, over every
// pairing of edge values (integers of each width at their limits and the
// same number in other types, text and bytes with separators, NUL and
// empty values, multi-column keys whose concatenations agree, and types
// outside the fast path).
func TestEncodeKey_DistinctExactlyWhenValuesDiffer(t *testing.T) {
	vals := []any{
		nil, int64(0), int64(1), int64(-1), int64(math.MaxInt64), int64(math.MinInt64), int64(256), int64(1 << 56),
		int32(1), int32(-1), int32(math.MinInt32), int16(1), int16(-1), int8(1), int8(-1), int(1), int(-1),
		uint64(1), uint64(math.MaxUint64), uint32(1), uint32(math.MaxUint32), uint16(1), uint8(1), uint8(255),
		"", "1", "-1", "a", "ab", "a\x00", "\x00", "s\x01a", "q", strings.Repeat("x", 200), strings.Repeat("x", 201),
		[]byte{}, []byte("1"), []byte("a"), []byte("ab"), []byte{0}, []byte{'s', 1, 'a'},
		true, false, 1.5, float64(1), float32(1), math.Inf(1), time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC),
		time.Date(2024, 1, 2, 3, 4, 5, 7, time.UTC), Unchanged,
	}
	same := func(a, b []any) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if fmt.Sprintf("%T", a[i]) != fmt.Sprintf("%T", b[i]) || !reflect.DeepEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	var keys [][]any
	for _, a := range vals {
		keys = append(keys, []any{a})
		for _, b := range vals {
			keys = append(keys, []any{a, b})
		}
	}
	// A third column on some pairs: keys of different column counts.
	for _, b := range vals {
		keys = append(keys, []any{"a", b, ""}, []any{int64(1), "", b})
	}
	seen := map[string][]any{}
	for _, k := range keys {
		enc := encodeKey(k)
		if enc != encodeKey(append([]any(nil), k...)) {
			t.Fatalf("%#v encodes differently twice", k)
		}
		if prev, ok := seen[enc]; ok && !same(prev, k) {
			t.Fatalf("%#v and %#v encode the same: %q", prev, k, enc)
		}
		seen[enc] = k
	}
}
