package runner

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

// The memory rule of a model run (docs/runner.md, "Memory"):
//
//   - the model's memory budget M is Options.ModelMemory, else
//     DefaultModelMemory, and at most half a cgroup memory cap;
//   - DuckDB's memory_limit is M/2 (unless Options.Engine sets one): past
//     it DuckDB spills to its temp_directory instead of growing;
//   - a model that sets no max_batch_rows and runs batch by batch reads
//     batches of at most M / (batchRowFactor × the source's row width)
//     rows (at least minBatchRows), each committed with its offsets, so a
//     first run over a big table holds one batch, not the table.
const (
	DefaultModelMemory = 1 << 30
	batchRowFactor     = 8
	minBatchRows       = 10_000
)

// modelMemory is the model memory budget M.
func modelMemory(o Options) int64 {
	m := o.ModelMemory
	if m <= 0 {
		m = DefaultModelMemory
	}
	if c := routes.MemoryCap(); c > 0 && m > c/2 {
		m = c / 2
	}
	return m
}

// engineMemoryLimit is DuckDB's memory_limit for a budget: half of it.
func engineMemoryLimit(budget int64) string {
	return fmt.Sprintf("%dMB", max(budget/2>>20, 64))
}

// DefaultBatchRows is the max_batch_rows of a model that sets none, for a
// source of that schema and a memory budget: the rows that fit in the
// budget batchRowFactor times over (the batch in DuckDB, the SQL's result,
// a contract's checked copy, the sink's encoder buffers and DuckDB's own
// working memory), at least minBatchRows.
func DefaultBatchRows(budget int64, schema *arrow.Schema) int64 {
	return max(budget/(batchRowFactor*rowBytes(schema)), minBatchRows)
}

// rowBytes estimates a row's size in Arrow: fixed-width columns by their
// width, others 32 bytes, plus a validity byte each.
func rowBytes(schema *arrow.Schema) int64 {
	var n int64
	for _, f := range schema.Fields() {
		w := int64(32)
		if fw, ok := f.Type.(arrow.FixedWidthDataType); ok && fw.BitWidth() >= 8 {
			w = int64(fw.BitWidth() / 8)
		}
		n += w + 1
	}
	return max(n, 1)
}

// wholeOps are the operators of a DuckDB plan whose result over the whole
// input differs from the union of their results over its batches, named
// as planOps normalizes them.
var wholeOps = map[string]bool{
	"HASH_GROUP_BY": true, "PERFECT_HASH_GROUP_BY": true, "UNGROUPED_AGGREGATE": true, "SIMPLE_AGGREGATE": true,
	"WINDOW": true, "STREAMING_WINDOW": true, "TOP_N": true, "LIMIT": true, "STREAMING_LIMIT": true,
	"LIMIT_PERCENT": true, "SAMPLE": true, "RESERVOIR_SAMPLE": true, "STREAMING_SAMPLE": true,
}

// planHeader is an operator's box header in DuckDB's EXPLAIN text:
// "╭─ Hash Group By ───╮".
var planHeader = regexp.MustCompile(`╭─+ ([A-Za-z_ ]+?) [─┴]`)

// planOps lists the operators of an EXPLAIN text, upper case with
// underscores (HASH_GROUP_BY).
func planOps(plan string) []string {
	var ops []string
	for _, m := range planHeader.FindAllStringSubmatch(plan, -1) {
		ops = append(ops, strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(m[1]), " ", "_")))
	}
	return ops
}

// wholeReason says why a model's SQL cannot run batch by batch ("" when it
// can), given the tables it reads and its DuckDB plan. A declared
// aggregate: and SQL that reads this merge each batch with what earlier
// batches wrote, so they run batch by batch whatever their plan.
func wholeReason(m *dagfile.Model, read []string, plan string) string {
	if m.Aggregate != nil || slices.Contains(read, dagfile.ThisView) {
		return ""
	}
	if strings.Contains(plan, "Sample Method:") { // a sample pushed into the scan
		return "its plan samples its input, which gives other rows batch by batch than over the whole input"
	}
	for _, op := range planOps(plan) {
		if wholeOps[op] {
			return fmt.Sprintf("its plan has %s over its input, which gives other rows batch by batch than over the whole input (declare aggregate: or merge with this to make it incremental)", op)
		}
	}
	return ""
}

// batchRows is the most rows one batch of in reads: max_batch_rows when
// set; else, for an append or upsert model over one incremental source
// whose SQL runs batch by batch, DefaultBatchRows when the source may hold
// more; else 0 (the batch is whatever is new, in DuckDB's memory_limit).
func (run *modelRun) batchRows(ctx context.Context, in *input) (int64, error) {
	if run.m.MaxBatchRows > 0 {
		return int64(run.m.MaxBatchRows), nil
	}
	if run.mode == routes.ModeReplace || run.incrementalSources() != 1 {
		return 0, nil
	}
	def := DefaultBatchRows(modelMemory(run.r.opts), in.info.Schema())
	if in.info.RowEstimate > 0 && in.info.RowEstimate <= def {
		return 0, nil
	}
	if cur := in.c.Cursor(); cur != routes.SnapshotCursor && !incremental.Boundable(in.info, cur) {
		return 0, nil
	}
	why, err := run.wholeWhy(ctx)
	if err != nil || why != "" {
		return 0, err
	}
	return def, nil
}

// incrementalSources counts the sources read with offsets.
func (run *modelRun) incrementalSources() int {
	n := 0
	for _, in := range run.inputs {
		if in.c != nil && !in.lookup {
			n++
		}
	}
	return n
}

// wholeWhy binds the model's SQL over empty tables of its inputs' schemas
// and returns wholeReason of its plan. SQL that does not bind is left to
// the run, which reports it.
func (run *modelRun) wholeWhy(ctx context.Context) (string, error) {
	text, err := run.sqlText()
	if err != nil {
		return "", err
	}
	db, err := run.engine.get()
	if err != nil {
		return "", err
	}
	read, err := db.TablesRead(ctx, text)
	if err != nil || run.m.Aggregate != nil || slices.Contains(read, dagfile.ThisView) {
		return "", nil
	}
	for _, in := range run.inputs {
		rd, err := array.NewRecordReader(in.info.Schema(), nil)
		if err != nil {
			return "", fmt.Errorf("plan %s: %w", run.t.Name, err)
		}
		if _, err := db.Load(ctx, in.name, rd); err != nil {
			return "", fmt.Errorf("plan %s: %w", run.t.Name, err)
		}
	}
	plan, err := rawPlan(ctx, db, text)
	if err != nil {
		return "", nil
	}
	return wholeReason(run.m, read, plan), nil
}

// rawPlan is DuckDB's plan of text without its optimizer: over the empty
// tables the shape is judged on, the optimizer would drop a LIMIT (the
// table's statistics say it holds fewer rows).
func rawPlan(ctx context.Context, db *duck.DB, text string) (string, error) {
	if err := db.Exec(ctx, "PRAGMA disable_optimizer"); err != nil {
		return "", err
	}
	defer db.Exec(context.WithoutCancel(ctx), "PRAGMA enable_optimizer")
	return db.Plan(ctx, text)
}

// more reports whether the source has more than this batch read, up to
// the heads its first batch saw: a page of a first read that was not the
// last, or a batch bounded below the head.
func (run *modelRun) more(heads map[string]string) bool {
	if run.rep.Held > 0 || run.rep.NothingNew {
		return false
	}
	for _, in := range run.inputs {
		if in.c == nil || in.lookup || in.b == nil {
			continue
		}
		if in.b.Cut {
			return false // a backfill under way: the rest is not whole yet
		}
		if in.b.Paging && in.b.Page != "" {
			return true
		}
		if h := heads[in.name]; h != "" && in.b.To != "" && incremental.Compare(in.b.To, h) < 0 {
			return true
		}
	}
	return false
}

// fold adds one batch's report to the run's.
func (r *Report) fold(b *Report) {
	r.Batches++
	r.RowsIn += b.RowsIn
	r.RowsOut += b.RowsOut
	r.Quarantined += b.Quarantined
	if b.QuarantineTable.Name != "" {
		r.QuarantineTable = b.QuarantineTable
	}
	for name, o := range b.Offsets {
		if prev, ok := r.Offsets[name]; ok {
			o.From = prev.From
		}
		r.Offsets[name] = o
	}
	r.Lag, r.LagUnit, r.Lags, r.Held = b.Lag, b.LagUnit, b.Lags, b.Held
	r.NothingNew = b.NothingNew && r.Batches == 1
	r.Changes = append(r.Changes, b.Changes...)
	r.Waiting = append(r.Waiting, b.Waiting...)
	if c := b.Contract; c != nil {
		if r.Contract == nil {
			cp := *c
			cp.Rules = map[string]int64{}
			r.Contract = &cp
			r.Contract.Checked, r.Contract.Broken = 0, 0
		}
		r.Contract.Checked += c.Checked
		r.Contract.Broken += c.Broken
		r.Contract.Passed = r.Contract.Passed && c.Passed
		for k, v := range c.Rules {
			r.Contract.Rules[k] += v
		}
		if r.Batches > 1 {
			r.Contract.DatasetRules = append(r.Contract.DatasetRules, c.DatasetRules...)
		}
	}
}
