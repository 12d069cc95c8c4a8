package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

var _ cdc.LogAppender = (*Endpoint)(nil)

// LastLoggedProperty is the table property of a changelog holding the
// last op it committed (cdc.LogPoint as JSON), set in the same commit as
// the ops. Tables commit one by one, and a capture restarts from the
// lowest position over its tables, so after a crash between two tables'
// commits a log is handed transactions it holds already: BeginLog puts
// the point on the cdc.Table (Logged), the window numbers those ops but
// drops them, and Flush skips any op at or before it all the same. A
// position alone would not do: a binlog's first transaction after a
// bootstrap starts at the baseline's coordinate (ordinal 0).
const LastLoggedProperty = "weir.changelog.last"

func logPointText(p cdc.LogPoint) string { b, _ := json.Marshal(p); return string(b) }

// after reports whether p comes after q in log order.
func after(p, q cdc.LogPoint) bool {
	if p.Position != q.Position {
		return p.Position > q.Position
	}
	return p.Ord > q.Ord
}

// lastLogged reads a log's LastLoggedProperty (zero: none).
func lastLogged(tbl *table.Table) cdc.LogPoint {
	var p cdc.LogPoint
	if raw, ok := tbl.Properties()[LastLoggedProperty]; ok {
		json.Unmarshal([]byte(raw), &p)
	}
	return p
}

// logInfo is a changelog's columns: the source's, all nullable (a delete
// may carry the key only), then the _weir_ columns; no key.
func logInfo(t *cdc.Table) *routes.TableInfo {
	info := *t.Info
	info.PrimaryKey = nil
	info.Columns = make([]routes.Column, 0, len(t.Info.Columns)+4)
	for _, c := range t.Info.Columns {
		c.Nullable = true
		info.Columns = append(info.Columns, c)
	}
	info.Columns = append(info.Columns,
		routes.Column{Name: cdc.ColOp, Type: arrow.BinaryTypes.String},
		routes.Column{Name: cdc.ColLSN, Type: arrow.BinaryTypes.String},
		routes.Column{Name: cdc.ColOrd, Type: arrow.PrimitiveTypes.Int32},
		routes.Column{Name: cdc.ColCommitTS, Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}})
	return &info
}

// BeginLog leases the logs of a run (creating missing ones) and opens one
// Iceberg transaction per log: each Flush appends the ops as data files,
// staged as an append snapshot; Commit commits them with the state.
func (e *Endpoint) BeginLog(ctx context.Context, tables []*cdc.Table) (cdc.Tx, error) {
	return e.begin(ctx, tables, nil, true)
}

// appendOps writes a table's ops as data files, in order: those at or
// before the log's last committed op are skipped, Unchanged values are
// filled from the latest I/U/B version of the row's origin key in the log.
func (tt *tableTx) appendOps(ctx context.Context, tw *cdc.TableWindow) error {
	var ops []cdc.LogOp
	for _, o := range tw.Ops {
		if after(cdc.LogPoint{Position: o.Position, Ord: o.Ord}, tt.last) {
			ops = append(ops, o)
		}
	}
	if len(ops) == 0 {
		return nil
	}
	if err := tt.fillLog(ctx, ops); err != nil {
		return fmt.Errorf("fill unchanged columns: %w", err)
	}
	rows := make([][]any, len(ops))
	for i, o := range ops {
		row := make([]any, 0, len(tt.t.Columns)+4)
		if o.Row == nil {
			row = append(row, make([]any, len(tt.t.Columns))...)
		} else {
			row = append(row, o.Row...)
		}
		rows[i] = append(row, string(o.Op), o.Position, int64(o.Ord), o.Commit)
	}
	files, err := tt.st.writeData(ctx, tt.batches(tt.st.target, logColumns(tt.t), rows))
	tt.st.addFiles(files, nil)
	if err != nil {
		return err
	}
	tt.pending = &chunk{data: files}
	last := ops[len(ops)-1]
	tt.last = cdc.LogPoint{Position: last.Position, Ord: last.Ord}
	return routes.Checkpoint("apply-after-append")
}

func logColumns(t *cdc.Table) []string {
	return append(append([]string(nil), t.Columns...), cdc.ColOp, cdc.ColLSN, cdc.ColOrd, cdc.ColCommitTS)
}

// fillLog fills the Unchanged values of ops from the latest I, U or B
// version of their origin key in the log (earlier chunks of the run count).
func (tt *tableTx) fillLog(ctx context.Context, ops []cdc.LogOp) error {
	var want [][]any
	for i := range ops {
		if ops[i].Partial() {
			want = append(want, ops[i].Origin)
		}
	}
	if len(want) == 0 {
		return nil
	}
	found, err := tt.currentRows(ctx, want, logRank)
	if err != nil {
		return err
	}
	for i := range ops {
		if ops[i].Partial() {
			ops[i].Row = append([]any(nil), ops[i].Row...)
			fillRow(ops[i].Row, found[tt.keyText(ops[i].Origin)])
		}
	}
	return nil
}

// logRank orders a log's versions of a key: (_weir_lsn, _weir_ord) of
// I, U and B rows.
func logRank(rec arrow.RecordBatch, i int) (string, bool) {
	col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
	switch col(cdc.ColOp).ValueStr(i) {
	case "I", "U", "B":
	default:
		return "", false
	}
	ord, _ := strconv.Atoi(col(cdc.ColOrd).ValueStr(i))
	return fmt.Sprintf("%s\x00%010d", col(cdc.ColLSN).ValueStr(i), ord), true
}

// AppendBaseline appends the rows the bootstrap loaded into b.Staged (an
// Iceberg table) to the log as B ops at b.Position and commits them with
// the state, in one commit; the staged table is dropped after it (a
// catalog operation of its own: one left by a crash in between is
// replaced by the next bootstrap and an empty one is never read).
func (e *Endpoint) AppendBaseline(ctx context.Context, b cdc.Baseline) error {
	x, err := e.begin(ctx, []*cdc.Table{b.Table}, nil, true)
	if err != nil {
		return err
	}
	defer x.Rollback()
	tt := x.tables[b.Table.Dest]
	if !b.Empty {
		if tt.pending, err = tt.baselineFiles(ctx, b); err != nil {
			return fmt.Errorf("append baseline rows: %w", err)
		}
	}
	tt.last = cdc.LogPoint{Position: b.Position}
	if err := x.commit(ctx, map[routes.TableRef]routes.State{b.Table.Dest: b.State}, false); err != nil {
		return err
	}
	return e.dropTable(ctx, b.Staged)
}

// baselineFiles writes the staged table's rows, with op B, the position,
// ordinal 0 and the bootstrap time, as data files of the log.
func (tt *tableTx) baselineFiles(ctx context.Context, b cdc.Baseline) (*chunk, error) {
	staged, err := tt.st.e.loadTable(ctx, b.Staged)
	if err != nil {
		return nil, err
	}
	if staged.CurrentSnapshot() == nil {
		return &chunk{}, nil
	}
	_, batches, err := staged.Scan().ToArrowRecords(ctx)
	if err != nil {
		return nil, err
	}
	files, err := tt.st.writeData(ctx, tt.baselineBatches(ctx, batches, b))
	tt.st.addFiles(files, nil)
	return &chunk{data: files}, err
}

// baselineBatches puts scanned rows in the log's schema.
func (tt *tableTx) baselineBatches(ctx context.Context, batches iter.Seq2[arrow.RecordBatch, error], b cdc.Baseline) iter.Seq2[arrow.RecordBatch, error] {
	target := tt.st.target
	return func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range batches {
			if err != nil {
				yield(nil, err)
				return
			}
			out, err := baselineBatch(ctx, rec, target, b)
			rec.Release()
			if !yield(out, err) || err != nil {
				return
			}
		}
	}
}

func baselineBatch(ctx context.Context, rec arrow.RecordBatch, target *arrow.Schema, b cdc.Baseline) (arrow.RecordBatch, error) {
	n := int(rec.NumRows())
	cols := make([]arrow.Array, target.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	consts := map[string]any{cdc.ColOp: string(cdc.OpBaseline), cdc.ColLSN: b.Position, cdc.ColOrd: int64(0), cdc.ColCommitTS: b.At}
	for i, f := range target.Fields() {
		var err error
		if v, ok := consts[f.Name]; ok {
			cols[i], err = constArray(f.Type, v, n)
		} else if idx := rec.Schema().FieldIndices(f.Name); len(idx) > 0 {
			cols[i], err = convertArray(ctx, rec.Column(idx[0]), f.Type, memory.DefaultAllocator)
		} else {
			cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, n)
		}
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
	}
	return array.NewRecordBatch(target, cols, int64(n)), nil
}

func constArray(typ arrow.DataType, v any, n int) (arrow.Array, error) {
	b := array.NewBuilder(memory.DefaultAllocator, typ)
	defer b.Release()
	for range n {
		if err := appendChange(b, v); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

// dropTable drops (and purges) a table; a missing one is fine.
func (e *Endpoint) dropTable(ctx context.Context, t routes.TableRef) error {
	drop := e.cat.DropTable
	if p, ok := e.cat.(catalog.PurgeableTable); ok {
		drop = p.PurgeTable
	}
	err := drop(ctx, ident(t))
	if err != nil && !errors.Is(err, catalog.ErrNoSuchTable) {
		return fmt.Errorf("drop %s (the baseline is committed): %w", t, err)
	}
	return nil
}
