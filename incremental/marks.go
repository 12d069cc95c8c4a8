package incremental

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/weirhq/weir/routes"
)

// A model task is a consumer group, Kafka-style: its position in each source
// table is committed into its sink, in the sink's own commit, as the
// routes.State row keyed by StateKey(task) — in SQL sinks the _weir_state
// row (dest_table = the sink table, source = "task:<name>"), in Iceberg the
// snapshot summary and table properties. The position becomes current only
// when the data does: a run killed before its commit re-reads the same rows.
//
// The State of a task's commit:
//
//	SourceID   "task:<name>"
//	Cursor     the cursor column of a single-source task ("" for several)
//	Watermark  the offset of a single-source task ("" for several)
//	Position   every source's mark, URL-query encoded and sorted:
//	           "input=1200&input.rows=1200" or "c=7&o=12"
//
// An offset is the text-encoded cursor value up to which rows were
// consumed, inclusive: an integer or timestamp cursor value for SQL
// sources, the snapshot sequence number for Iceberg. The empty offset is
// the start of the table.

// StatePrefix starts the SourceID of every task's state.
const StatePrefix = "task:"

// StateKey is the routes.State.SourceID under which a task's position is
// committed into its sink (and loaded back with routes.StateReader).
func StateKey(task string) string { return StatePrefix + task }

// Mark is a task's committed place in one source.
type Mark struct {
	Offset string // consumed through this offset, inclusive; "" = nothing yet
	Rows   int64  // rows at or below Offset when committed; -1 when not counted
	// Page is the place inside the snapshot a first read is paging
	// through (routes.SnapshotPager), "<snapshot>:<rows consumed>"; ""
	// when no first read is under way. Offset stays "" until the last
	// page, whose commit moves it to the snapshot.
	Page string
}

// Marks are a task's places in its sources, by source (view) name.
type Marks map[string]Mark

// Encode renders the marks as sorted URL query text: "input=12&input.rows=40".
func (m Marks) Encode() string {
	q := url.Values{}
	for name, mk := range m {
		q.Set(name, mk.Offset)
		if mk.Page != "" {
			q.Set(name+".page", mk.Page)
		}
		if mk.Rows >= 0 {
			q.Set(name+".rows", strconv.FormatInt(mk.Rows, 10))
		}
	}
	return q.Encode() // url.Values.Encode sorts by key
}

// DecodeMarks parses Encode's text.
func DecodeMarks(s string) (Marks, error) {
	q, err := url.ParseQuery(s)
	if err != nil {
		return nil, fmt.Errorf("decode offsets %q: %w", s, err)
	}
	m := Marks{}
	for k, v := range q {
		if !strings.HasSuffix(k, ".rows") && !strings.HasSuffix(k, ".page") && len(v) > 0 {
			m[k] = Mark{Offset: v[0], Rows: rowsOf(q, k), Page: q.Get(k + ".page")}
		}
	}
	return m, nil
}

func rowsOf(q url.Values, name string) int64 {
	n, err := strconv.ParseInt(q.Get(name+".rows"), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// Names returns the sources of m, sorted.
func (m Marks) Names() []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TaskState builds the routes.State a task commits with its data.
func TaskState(task, cursor string, marks Marks, runID string, rows int64) routes.State {
	st := routes.State{SourceID: StateKey(task), Position: marks.Encode(), RunID: runID, Rows: rows}
	if len(marks) == 1 {
		for _, mk := range marks {
			st.Cursor, st.Watermark = cursor, mk.Offset
		}
	}
	return st
}

// LoadMarks reads the marks a task last committed into table; found is
// false before its first commit.
func LoadMarks(ctx context.Context, dst routes.Destination, table routes.TableRef, task string) (Marks, bool, error) {
	sr, ok := routes.As[routes.StateReader](dst)
	if !ok {
		return nil, false, fmt.Errorf("%w: the sink keeps no state, so a task cannot keep its offsets there", routes.ErrUnsupported)
	}
	st, found, err := sr.LoadState(ctx, table, StateKey(task))
	if err != nil || !found {
		return Marks{}, false, err
	}
	m, err := DecodeMarks(st.Position)
	if err != nil {
		return nil, false, fmt.Errorf("state of task %s in %s: %w", task, table, err)
	}
	return m, true, nil
}

// Start is where a consumer begins when its group has committed nothing:
// auto.offset.reset.
type Start struct {
	Latest bool   // skip history: begin at the source's head
	Offset string // begin after this offset; "" with !Latest = earliest
}

// ParseStart parses earliest, latest or an offset.
func ParseStart(s string) (Start, error) {
	switch s = strings.TrimSpace(s); s {
	case "", "earliest":
		return Start{}, nil
	case "latest":
		return Start{Latest: true}, nil
	}
	if strings.ContainsAny(s, "\n\r") {
		return Start{}, routes.BadInput("bad offset %q: use earliest, latest or an offset", s)
	}
	return Start{Offset: s}, nil
}

// String renders the start as ParseStart reads it.
func (s Start) String() string {
	switch {
	case s.Latest:
		return "latest"
	case s.Offset == "":
		return "earliest"
	}
	return s.Offset
}
