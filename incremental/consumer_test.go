package incremental

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

// fakeTable is an in-memory source table with an integer key "id" (the
// cursor), and a sink that keeps the committed states.
type fakeTable struct {
	ids    []int64
	states map[string]routes.State
	// nulls, when >= 0 with nullable set, is how many rows have a NULL id
	// (NullCount answers it); nullCalls counts the NullCount calls.
	nullable  bool
	nulls     int64
	nullCalls int
}

var _ routes.CursorSource = (*fakeTable)(nil)

func (f *fakeTable) Close() error { return nil }

func (f *fakeTable) Probe(context.Context, routes.TableRef) (*routes.TableInfo, error) {
	return &routes.TableInfo{Scheme: "fake", Ref: routes.TableRef{Name: "t"}, PrimaryKey: []string{"id"},
		Columns: []routes.Column{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: f.nullable}}, RowEstimate: int64(len(f.ids))}, nil
}

func (f *fakeTable) Plan(_ context.Context, info *routes.TableInfo, _ routes.PlanOptions) ([]routes.Range, error) {
	return []routes.Range{{Table: info, Count: 1, Label: "all"}}, nil
}

func (f *fakeTable) Read(_ context.Context, r routes.Range, o routes.ReadOptions) (routes.Stream, error) {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for _, id := range f.ids {
		if (o.After == "" || Compare(strconv.FormatInt(id, 10), o.After) > 0) && (o.Until == "" || Compare(strconv.FormatInt(id, 10), o.Until) <= 0) {
			b.Append(id)
		}
	}
	sc := r.Table.Schema()
	arr := b.NewArray()
	defer arr.Release()
	rec := array.NewRecordBatch(sc, []arrow.Array{arr}, int64(arr.Len()))
	defer rec.Release()
	return array.NewRecordReader(sc, []arrow.RecordBatch{rec})
}

func (f *fakeTable) MaxCursor(context.Context, *routes.TableInfo, string) (string, bool, error) {
	if len(f.ids) == 0 {
		return "", false, nil
	}
	return strconv.FormatInt(slices.Max(f.ids), 10), true, nil
}

func (f *fakeTable) NullCount(context.Context, *routes.TableInfo, string) (int64, error) {
	f.nullCalls++
	return f.nulls, nil
}

func (f *fakeTable) Prepare(context.Context, *routes.TableInfo, routes.WriteOptions) (routes.Stage, error) {
	return fakeStage{f}, nil
}

func (f *fakeTable) LoadState(_ context.Context, _ routes.TableRef, id string) (routes.State, bool, error) {
	s, ok := f.states[id]
	return s, ok, nil
}

type fakeStage struct{ f *fakeTable }

func (s fakeStage) Write(context.Context, routes.Stream) (int64, error) { return 0, nil }
func (s fakeStage) Abort(context.Context) error                         { return nil }
func (s fakeStage) Commit(_ context.Context, st routes.State) error {
	if s.f.states == nil {
		s.f.states = map[string]routes.State{}
	}
	s.f.states[st.SourceID] = st
	return nil
}

func (f *fakeTable) add(from, to int64) {
	for i := from; i <= to; i++ {
		f.ids = append(f.ids, i)
	}
}

// consumer opens the consumer of task "m" as a new run would.
func (f *fakeTable) consumer(t *testing.T, start Start) *Consumer {
	t.Helper()
	ctx := context.Background()
	marks, found, err := LoadMarks(ctx, f, routes.TableRef{Name: "sink"}, "m")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Task: "m", Name: "input", Source: f, Start: start}
	if mk, ok := marks["input"]; ok && found {
		cfg.Committed = &mk
	}
	c, err := NewConsumer(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// poll polls and commits, returning the batch's window and row count.
func (f *fakeTable) poll(t *testing.T, c *Consumer, opts PollOptions) (string, string, int64) {
	t.Helper()
	ctx := context.Background()
	b, err := c.Poll(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stream.Release()
	var n int64
	for b.Stream.Next() {
		n += b.Stream.RecordBatch().NumRows()
	}
	if err := c.Commit(ctx, fakeStage{f}, b, routes.State{RunID: "r"}); err != nil {
		t.Fatal(err)
	}
	return b.From, b.To, n
}

func TestConsumer_PollCommitResume(t *testing.T) {
	f := &fakeTable{}
	c := f.consumer(t, Start{})
	if from, to, n := f.poll(t, c, PollOptions{}); from != "" || to != "" || n != 0 {
		t.Fatalf("empty table: (%s, %s] %d rows", from, to, n)
	}
	f.add(1, 10)
	if from, to, n := f.poll(t, c, PollOptions{}); from != "" || to != "10" || n != 10 {
		t.Fatalf("first batch: (%s, %s] %d rows", from, to, n)
	}
	f.add(11, 15)
	c = f.consumer(t, Start{}) // a new run resumes from the sink's state
	if c.Position() != "10" {
		t.Fatalf("resumed at %q, want 10", c.Position())
	}
	if l, _ := c.Lag(context.Background()); l.Behind != 5 {
		t.Fatalf("lag %+v, want 5", l)
	}
	if from, to, n := f.poll(t, c, PollOptions{}); from != "10" || to != "15" || n != 5 {
		t.Fatalf("second batch: (%s, %s] %d rows", from, to, n)
	}
	st := f.states[StateKey("m")]
	if st.Watermark != "15" || st.Cursor != "id" || st.Position != "input=15" {
		t.Fatalf("committed state %+v", st)
	}
}

func TestConsumer_Start(t *testing.T) {
	tests := []struct {
		start    string
		wantFrom string
		wantRows int64
	}{
		{"earliest", "", 20},
		{"latest", "20", 0},
		{"12", "12", 8},
	}
	for _, tt := range tests {
		t.Run(tt.start, func(t *testing.T) {
			f := &fakeTable{}
			f.add(1, 20)
			s, err := ParseStart(tt.start)
			if err != nil {
				t.Fatal(err)
			}
			if from, _, n := f.poll(t, f.consumer(t, s), PollOptions{}); from != tt.wantFrom || n != tt.wantRows {
				t.Fatalf("from %q, %d rows; want %q, %d", from, n, tt.wantFrom, tt.wantRows)
			}
			f.add(21, 22)
			if _, _, n := f.poll(t, f.consumer(t, s), PollOptions{}); n != 2 {
				t.Fatalf("next run read %d rows, want 2", n)
			}
		})
	}
}

func TestConsumer_MaxRowsSeekAndCount(t *testing.T) {
	f := &fakeTable{}
	f.add(1, 10)
	f.ids = append(f.ids, 4, 4) // ties on 4
	c := f.consumer(t, Start{})
	if _, to, n := f.poll(t, c, PollOptions{MaxRows: 4}); to != "4" || n != 6 {
		t.Fatalf("bounded batch: to %s, %d rows (ties included)", to, n)
	}
	if _, to, n := f.poll(t, c, PollOptions{MaxRows: 4}); to != "8" || n != 4 {
		t.Fatalf("second bounded batch: to %s, %d rows", to, n)
	}
	c.Seek("2")
	b, err := c.Poll(context.Background(), PollOptions{Count: true, Until: "5"})
	if err != nil {
		t.Fatal(err)
	}
	b.Stream.Release()
	if b.Base != 2 || b.From != "2" || b.To != "5" {
		t.Fatalf("after Seek(2): %+v", b)
	}
	f.ids = []int64{1, 2}
	b, err = f.consumer(t, Start{}).Poll(context.Background(), PollOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.Stream.Release()
	if !b.Regressed || !b.Empty {
		t.Fatalf("head below the position: %+v", b)
	}
}

func TestMarks_EncodeDecode(t *testing.T) {
	m := Marks{"o": {Offset: "12", Rows: 40}, "c": {Offset: "2024-01-01 00:00:00.000000", Rows: -1}}
	s := m.Encode()
	if s != "c=2024-01-01+00%3A00%3A00.000000&o=12&o.rows=40" {
		t.Fatalf("Encode = %s", s)
	}
	back, err := DecodeMarks(s)
	if err != nil || len(back) != 2 || back["o"] != m["o"] || back["c"] != m["c"] {
		t.Fatalf("DecodeMarks = %v, %v", back, err)
	}
}

// TestCountLag_SnapshotsWhenRowsUnknown: a snapshot cursor whose rows the
// source cannot count (no RangeCounter, or summaries without
// added-records) is behind by snapshots (sequence numbers), and says so.
func TestCountLag_SnapshotsWhenRowsUnknown(t *testing.T) {
	src := &fakeTable{}
	info, _ := src.Probe(context.Background(), routes.TableRef{Name: "t"})
	l, err := CountLag(context.Background(), src, info, routes.SnapshotCursor, "3", "7")
	if err != nil || l.Behind != 4 || l.Unit != UnitSnapshots {
		t.Fatalf("snapshot cursor lag %+v, %v; want 4 snapshots", l, err)
	}
	if l, _ := CountLag(context.Background(), src, info, "id", "3", "7"); l.Unit != UnitKeyDistance {
		t.Fatalf("integer cursor lag %+v; want key distance", l)
	}
}

func TestLagBetween(t *testing.T) {
	tests := []struct {
		pos, head string
		want      Lag
	}{
		{"10", "25", Lag{Position: "10", Head: "25", Behind: 15, Unit: "key distance", Known: true}},
		{"", "25", Lag{Head: "25", Behind: 100, Unit: "rows", Known: true}},
		{"2024-01-01 00:00:00.000000", "2024-01-01 00:01:30.000000", Lag{Position: "2024-01-01 00:00:00.000000", Head: "2024-01-01 00:01:30.000000", Behind: 90, Unit: "seconds", Known: true}},
		{"25", "25", Lag{Position: "25", Head: "25", Unit: "key distance", Known: true}},
	}
	for _, tt := range tests {
		if got := LagBetween(tt.pos, tt.head, 100); got != tt.want {
			t.Errorf("LagBetween(%q, %q) = %+v, want %+v", tt.pos, tt.head, got, tt.want)
		}
	}
}
