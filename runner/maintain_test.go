package runner

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/iceberg"
)

// maintainYAML adds a second reader of bronze.orders that first runs
// late (it reads from the start of the table) and a replace model.
const maintainYAML = `  late_log:
    model: {source: lake:bronze.orders, sink: lake:silver.late, mode: append, sql: "SELECT id, amount FROM input"}
`

func lakeEndpoint(t *testing.T, r *Runner) *iceberg.Endpoint {
	t.Helper()
	dst, err := r.destination(testContext(t), "lake")
	if err != nil {
		t.Fatal(err)
	}
	return dst.(*iceberg.Endpoint)
}

func lakeRef(table string) routes.TableRef {
	schema, name, _ := strings.Cut(table, ".")
	return routes.TableRef{Schema: schema, Name: name}
}

// lakeFiles counts the live data files of a lake table.
func lakeFiles(t *testing.T, r *Runner, name string) int {
	t.Helper()
	ctx := testContext(t)
	tbl, err := lakeEndpoint(t, r).LoadTable(ctx, lakeRef(name))
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return len(tasks)
}

func sortedRows(t *testing.T, r *Runner, table string) []string {
	rows := lakeRows(t, r, table)
	slices.Sort(rows)
	return rows
}

func maintainOpts() routes.MaintainOptions {
	return routes.MaintainOptions{Consumed: routes.AllConsumed, RetainLast: 1, OrphanAge: time.Nanosecond}
}

// TestMaintain_RemovesKilledRunOrphans: maintain is refused (locked)
// while a run writes the table; that run killed (SIGKILL) before its
// commit leaves data files no snapshot references; a dry run lists them
// and deletes nothing; maintain deletes them (taking over the dead run's
// lease), the table reads the same, and the model then reads on from its
// offset exactly as if nothing had happened.
func TestMaintain_RemovesKilledRunOrphans(t *testing.T) {
	d := newLakeDAG(t, "warn")
	r := d.runner(t)
	ctx := testContext(t)
	d.orders(t, 1, 20)
	once(t, r, "bronze_orders")
	once(t, r, "silver_log")
	d.orders(t, 1, 40)
	once(t, r, "bronze_orders")
	// While the run is alive (paused before its commit) maintain is
	// refused as locked and does nothing; then the run is killed.
	child := startPaused(t, d.path, "silver_log", "before-commit")
	if _, err := r.Maintain(ctx, "silver_log", maintainOpts()); !errors.Is(err, routes.ErrLocked) {
		child.Process.Kill()
		t.Fatalf("maintain while a run writes the table: %v, want locked", err)
	}
	child.Process.Kill() // SIGKILL
	child.Wait()
	e := lakeEndpoint(t, r)
	orphans, err := e.Orphans(ctx, lakeRef("silver.log"))
	if err != nil || len(orphans) == 0 {
		t.Fatalf("the killed run left no orphan (%v): the test kills at the wrong place", err)
	}
	before := sortedRows(t, r, "silver.log")
	o := maintainOpts()
	o.DryRun = true
	rep, err := r.Maintain(ctx, "silver_log", o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Orphans.Files) != len(orphans) {
		t.Fatalf("dry run lists %d orphans %v, want %v", len(rep.Orphans.Files), rep.Orphans.Files, orphans)
	}
	if again, _ := e.Orphans(ctx, lakeRef("silver.log")); len(again) != len(orphans) {
		t.Fatalf("the dry run deleted orphans: %d left of %d", len(again), len(orphans))
	}
	if rep, err = r.Maintain(ctx, "silver_log", maintainOpts()); err != nil {
		t.Fatal(err)
	}
	for _, f := range orphans {
		if !slices.ContainsFunc(rep.Orphans.Files, func(g string) bool { return strings.HasSuffix(g, baseOf(f)) }) {
			t.Errorf("orphan %s is not in the report %v", f, rep.Orphans.Files)
		}
	}
	if left, err := e.Orphans(ctx, lakeRef("silver.log")); err != nil || len(left) != 0 {
		t.Fatalf("after maintain: orphans %v (%v)", left, err)
	}
	if after := sortedRows(t, r, "silver.log"); !slices.Equal(after, before) {
		t.Fatalf("maintain changed the table: %d rows, want %d", len(after), len(before))
	}
	if rep := once(t, r, "silver_log"); rep.Error != "" || rep.RowsIn != 20 {
		t.Fatalf("the model after maintain: %+v, want the 20 rows the killed run had", rep)
	}
	if rows := sortedRows(t, r, "silver.log"); len(rows) != 40 {
		t.Fatalf("silver.log has %d rows, want 40", len(rows))
	}
}

func baseOf(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// TestMaintain_KeepsWhatOffsetsNeed: bronze.orders gets an append
// snapshot per batch while silver_log has read only the first two;
// maintain expires the snapshots before silver_log's offset and no later
// one, compacts only the files silver_log has read, and keeps the content;
// silver_log then reads exactly the rows it had not, a model that never ran
// reads every row from the start, and after everyone caught up a second
// maintain compacts the rest into one file, after which the readers find
// no new row. The table's own state (the transfer's watermark) is the same
// and the compaction snapshot's summary carries it.
func TestMaintain_KeepsWhatOffsetsNeed(t *testing.T) {
	d := newLakeDAG(t, "warn")
	body, _ := readFile(d.path)
	writeFile(t, d.path, body+maintainYAML)
	r := d.runner(t)
	ctx := testContext(t)
	for i := 1; i <= 6; i++ {
		d.orders(t, 1, 10*i)
		once(t, r, "bronze_orders")
		if i == 2 || i == 3 {
			once(t, r, "silver_log")
		}
	}
	marks, _, err := incremental.LoadMarks(ctx, lakeEndpoint(t, r), lakeRef("silver.log"), "silver_log")
	if err != nil {
		t.Fatal(err)
	}
	offset := marks["input"].Offset
	e := lakeEndpoint(t, r)
	propsBefore, summaryBefore := weirProps(t, e, "bronze.orders"), summaryState(t, e, "bronze.orders")
	rowsBefore := sortedRows(t, r, "bronze.orders")
	filesBefore := lakeFiles(t, r, "bronze.orders")
	rep, err := r.Maintain(ctx, "bronze_orders", maintainOpts())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Consumed == nil || itoa(int(*rep.Consumed)) != offset {
		t.Fatalf("consumed through %v, want silver_log's offset %s", rep.Consumed, offset)
	}
	for _, seq := range rep.Expire.Expired {
		if itoa(int(seq)) == offset || seq > *rep.Consumed {
			t.Errorf("expired snapshot %d, at or after silver_log's offset %s (%+v)", seq, offset, rep.Expire)
		}
	}
	if len(rep.Expire.Expired) == 0 || rep.Compact.Rewritten != 3 || rep.Compact.Unconsumed != 3 {
		t.Fatalf("maintain: %+v, want the snapshots before %s expired and the 3 files read by silver_log compacted, 3 left", rep, offset)
	}
	if got := lakeFiles(t, r, "bronze.orders"); got != filesBefore-2 {
		t.Fatalf("%d data files after compaction, want %d", got, filesBefore-2)
	}
	if got := sortedRows(t, r, "bronze.orders"); !slices.Equal(got, rowsBefore) {
		t.Fatalf("compaction changed bronze.orders: %d rows, want %d", len(got), len(rowsBefore))
	}
	if got := weirProps(t, e, "bronze.orders"); !equalMaps(got, propsBefore) {
		t.Fatalf("weir properties changed:\n%v\nwant\n%v", got, propsBefore)
	}
	checkCarried(t, e, "bronze.orders", summaryBefore)
	if rep := once(t, r, "silver_log"); rep.Error != "" || rep.RowsIn != 30 {
		t.Fatalf("silver_log after maintain: %+v, want the 30 rows it had not read", rep)
	}
	if rep := once(t, r, "late_log"); rep.Error != "" || rep.RowsIn != 60 {
		t.Fatalf("late_log (first run) after maintain: %+v, want all 60 rows", rep)
	}
	want := slices.Clone(rowsBefore)
	for _, table := range []string{"silver.log", "silver.late"} {
		if got := lakeRows(t, r, table); len(got) != 60 {
			t.Fatalf("%s: %d rows, want 60", table, len(got))
		}
	}
	// Everyone has read everything: the rest is compacted too.
	if rep, err = r.Maintain(ctx, "bronze_orders", maintainOpts()); err != nil {
		t.Fatal(err)
	}
	if got := lakeFiles(t, r, "bronze.orders"); got != 1 || rep.Compact.Unconsumed != 0 {
		t.Fatalf("second maintain: %d data files, %+v", got, rep.Compact)
	}
	if got := sortedRows(t, r, "bronze.orders"); !slices.Equal(got, want) {
		t.Fatalf("second compaction changed bronze.orders")
	}
	for _, task := range []string{"silver_log", "late_log"} {
		if rep := once(t, r, task); rep.Error != "" || rep.RowsIn != 0 {
			t.Fatalf("%s after the compaction: %+v, want no new row", task, rep)
		}
	}
	d.orders(t, 1, 70)
	once(t, r, "bronze_orders")
	if rep := once(t, r, "silver_log"); rep.RowsIn != 10 {
		t.Fatalf("silver_log after new rows: %+v, want 10", rep)
	}
}

// TestMaintain_CompactsModelSinkKeepingOffsets: a model's sink written in
// many small commits is compacted into one file; its rows and the task's
// committed offsets are the same after, and the model reads on.
func TestMaintain_CompactsModelSinkKeepingOffsets(t *testing.T) {
	d := newLakeDAG(t, "warn")
	r := d.runner(t)
	ctx := testContext(t)
	for i := 1; i <= 4; i++ {
		d.orders(t, 1, 5*i)
		once(t, r, "bronze_orders")
		once(t, r, "silver_log")
	}
	e := lakeEndpoint(t, r)
	marks := func() string {
		m, _, err := incremental.LoadMarks(ctx, e, lakeRef("silver.log"), "silver_log")
		if err != nil {
			t.Fatal(err)
		}
		return m.Encode()
	}
	marksBefore, rowsBefore, files := marks(), sortedRows(t, r, "silver.log"), lakeFiles(t, r, "silver.log")
	summaryBefore := summaryState(t, e, "silver.log")
	rep, err := r.Maintain(ctx, "silver_log", maintainOpts())
	if err != nil {
		t.Fatal(err)
	}
	if files != 4 || lakeFiles(t, r, "silver.log") != 1 || rep.Compact.Rewritten != 4 || rep.Compact.Written != 1 {
		t.Fatalf("compaction of %d files: %+v, %d files after", files, rep.Compact, lakeFiles(t, r, "silver.log"))
	}
	if got := marks(); got != marksBefore {
		t.Fatalf("offsets moved: %s, want %s", got, marksBefore)
	}
	if got := sortedRows(t, r, "silver.log"); !slices.Equal(got, rowsBefore) {
		t.Fatalf("compaction changed silver.log")
	}
	checkCarried(t, e, "silver.log", summaryBefore)
	d.orders(t, 1, 25)
	once(t, r, "bronze_orders")
	if rep := once(t, r, "silver_log"); rep.RowsIn != 5 || len(lakeRows(t, r, "silver.log")) != 25 {
		t.Fatalf("silver_log after maintain: %+v", rep)
	}
}

// weirProps are the table's weir.* properties.
func weirProps(t *testing.T, e *iceberg.Endpoint, name string) map[string]string {
	t.Helper()
	tbl, err := e.LoadTable(testContext(t), lakeRef(name))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range tbl.Properties() {
		if strings.HasPrefix(k, "weir.state.") || strings.HasPrefix(k, "weir.offset.") {
			out[k] = v
		}
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// summaryState is the weir state and watermarks in the summary of the
// table's current snapshot.
func summaryState(t *testing.T, e *iceberg.Endpoint, name string) map[string]string {
	t.Helper()
	tbl, err := e.LoadTable(testContext(t), lakeRef(name))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range tbl.CurrentSnapshot().Summary.Properties {
		if strings.HasPrefix(k, iceberg.StatePrefix) || strings.HasPrefix(k, iceberg.WatermarkPrefix) {
			out[k] = v
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: the current snapshot's summary has no weir state", name)
	}
	return out
}

// checkCarried: the current snapshot is maintain's replace, and its
// summary carries the state the snapshot before it had.
func checkCarried(t *testing.T, e *iceberg.Endpoint, name string, before map[string]string) {
	t.Helper()
	tbl, err := e.LoadTable(testContext(t), lakeRef(name))
	if err != nil {
		t.Fatal(err)
	}
	cur := tbl.CurrentSnapshot()
	if cur.Summary == nil || cur.Summary.Operation != table.OpReplace || cur.Summary.Properties[iceberg.MaintainProperty] != "compact" {
		t.Fatalf("current snapshot of %s: %+v, want maintain's replace", name, cur.Summary)
	}
	if got := summaryState(t, e, name); !equalMaps(got, before) {
		t.Fatalf("%s: the compaction's summary carries %v, want %v", name, got, before)
	}
}

// TestMaintain_CountsReadersThroughAnotherConnectionName: a model that
// reads bronze.orders through a second connection name for the same lake
// (lake2, the same URL) is a reader like any other: its offset holds the
// snapshots and files it has not read, so after maintain it still reads
// exactly the rows it had not (compacting them would hide them from it).
func TestMaintain_CountsReadersThroughAnotherConnectionName(t *testing.T) {
	d := newLakeDAG(t, "warn")
	body, _ := readFile(d.path)
	body = strings.Replace(body, "  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake\n",
		"  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake\n"+
			"  lake2: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake\n", 1)
	if !strings.Contains(body, "lake2:") {
		t.Fatal("the test's dagfile has no lake2 connection")
	}
	writeFile(t, d.path, body+`  alias_log:
    model: {source: lake2:bronze.orders, sink: lake:silver.alias, mode: append, sql: "SELECT id, amount FROM input"}
`)
	r := d.runner(t)
	ctx := testContext(t)
	for i := 1; i <= 4; i++ {
		d.orders(t, 1, 10*i)
		once(t, r, "bronze_orders")
		if i == 1 {
			once(t, r, "alias_log")
		}
	}
	once(t, r, "silver_log")
	marks, _, err := incremental.LoadMarks(ctx, lakeEndpoint(t, r), lakeRef("silver.alias"), "alias_log")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Maintain(ctx, "bronze_orders", maintainOpts())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Consumed == nil || itoa(int(*rep.Consumed)) != marks["input"].Offset {
		t.Errorf("consumed through %d, want alias_log's offset %s (it reads the table through lake2)", ptrValue(rep.Consumed), marks["input"].Offset)
	}
	if rep := once(t, r, "alias_log"); rep.Error != "" || rep.RowsIn != 30 {
		t.Fatalf("alias_log after maintain: %+v, want the 30 rows it had not read", rep)
	}
}

func ptrValue(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}
