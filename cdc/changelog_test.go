package cdc

import (
	"fmt"
	"reflect"
	"testing"
)

// TestLogWindow_Add: a changelog window keeps every op in order, numbers
// the ops of a transaction across tables, splits a key change into D + U
// and fills Unchanged values from the key's earlier version in the window
// (keeping the origin key for what it cannot fill).
func TestLogWindow_Add(t *testing.T) {
	tbl := testTable()
	w := NewLogWindow()
	type change struct {
		Change
		other bool // a change of the second table
	}
	changes := []change{
		{Change: Change{Op: OpInsert, After: []any{"1", "a", "x"}, Position: "p1"}},
		{Change: Change{Op: OpUpdate, After: []any{"1", "b", Unchanged}, Position: "p1"}},
		{Change: Change{Op: OpUpdate, Key: []any{"1"}, After: []any{"2", "c", Unchanged}, Position: "p2"}},
		{Change: Change{Op: OpUpdate, Key: []any{"9"}, After: []any{"8", "d", Unchanged}, Position: "p3"}},
		{Change: Change{Op: OpUpdate, After: []any{"8", "e", Unchanged}, Position: "p3"}},
		{Change: Change{Op: OpInsert, After: []any{"5", "o", "y"}, Position: "p3"}, other: true},
		{Change: Change{Op: OpDelete, Key: []any{"2"}, Position: "p4"}},
		{Change: Change{Op: OpTruncate, Position: "p5"}},
	}
	other := testTable()
	other.Source.Name = "u"
	for _, c := range changes {
		into := tbl
		if c.other {
			into = other
		}
		if err := w.Add(into, c.Change); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, o := range w.Tables["s.t"].Ops {
		got = append(got, fmt.Sprintf("%s %s/%d %v %v", o.Op, o.Position, o.Ord, o.Row, o.Origin))
	}
	want := []string{
		"I p1/1 [1 a x] [1]",
		"U p1/2 [1 b x] [1]",
		"D p2/1 [1 <nil> <nil>] [1]",
		"U p2/2 [2 c x] [1]",
		"D p3/1 [9 <nil> <nil>] [9]",
		"U p3/2 [8 d {}] [9]",
		"U p3/3 [8 e {}] [9]",
		"D p4/1 [2 <nil> <nil>] [2]",
		"T p5/1 [] []",
	}
	if o := w.Tables["s.u"].Ops; len(o) != 1 || o[0].Ord != 4 {
		t.Errorf("second table's ops = %+v, want one with ordinal 4 in p3", o)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ops:\n got %q\nwant %q", got, want)
	}
	if w.Changes != len(changes) {
		t.Errorf("changes = %d, want %d", w.Changes, len(changes))
	}
	var res Result
	res.Count(w)
	if res.Appended != 10 || res.Truncates != 1 || res.Upserts != 0 {
		t.Errorf("count = %+v, want 10 appended, 1 truncate", res)
	}
}

// TestLogWindow_Flush: every FlushChanges ops the window hands them over
// and forgets them (and its latest rows: fills then come from the log);
// ordinals and counts go on across flushes.
func TestLogWindow_Flush(t *testing.T) {
	old := FlushChanges
	FlushChanges = 2
	t.Cleanup(func() { FlushChanges = old })
	tbl := testTable()
	w := NewLogWindow()
	var flushed []string
	w.flush = func() error {
		for _, o := range w.Tables["s.t"].Ops {
			flushed = append(flushed, fmt.Sprintf("%s %s/%d %v", o.Op, o.Position, o.Ord, o.Row))
		}
		return nil
	}
	for _, c := range []Change{
		{Op: OpInsert, After: []any{"1", "a", "x"}, Position: "p1"},
		{Op: OpUpdate, After: []any{"1", "b", Unchanged}, Position: "p1"},
		{Op: OpUpdate, After: []any{"1", "c", Unchanged}, Position: "p1"},
	} {
		if err := w.Add(tbl, c); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"I p1/1 [1 a x]", "U p1/2 [1 b x]"}
	if !reflect.DeepEqual(flushed, want) {
		t.Fatalf("flushed %q, want %q", flushed, want)
	}
	ops := w.Tables["s.t"].Ops
	if len(ops) != 1 || ops[0].Ord != 3 || !IsUnchanged(ops[0].Row[2]) || !reflect.DeepEqual(ops[0].Origin, []any{"1"}) {
		t.Fatalf("held after the flush: %+v, want U p1/3 with big Unchanged (filled from the log)", ops)
	}
	var res Result
	res.Count(w)
	if res.Appended != 3 {
		t.Errorf("appended = %d, want 3", res.Appended)
	}
}
