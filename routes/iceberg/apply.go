package iceberg

import (
	"context"
	"fmt"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

var _ cdc.Applier = (*Endpoint)(nil)

// applyBatchRows bounds the rows of one Arrow batch a chunk is written in.
const applyBatchRows = 4096

// BeginApply leases the replica tables of a run (creating missing ones
// from the source's probe, with the key as identifier fields) and opens
// one Iceberg transaction per table. Merge-on-read: each Flush writes the
// chunk's upserts as data files and the keys of its upserts and deletes
// as equality delete files, and stages them as one row delta after the
// chunk before (see runTx).
func (e *Endpoint) BeginApply(ctx context.Context, tables []*cdc.Table) (cdc.Tx, error) {
	return e.begin(ctx, tables, nil, false)
}

// ApplyWindow applies one small window and saves states in one commit per
// table (cdc.Applier): a bootstrap's TRUNCATE of an empty table, a
// reset's cleared positions.
func (e *Endpoint) ApplyWindow(ctx context.Context, w *cdc.Window, states map[routes.TableRef]routes.State) error {
	return cdc.ApplyWhole(ctx, w, states, func(ctx context.Context, tables []*cdc.Table, dests []routes.TableRef) (cdc.Tx, error) {
		return e.begin(ctx, tables, dests, false)
	})
}

// replicaInfo is the source's probe with the capture's key as primary
// key: a table created from it has the key as identifier fields.
func replicaInfo(t *cdc.Table) *routes.TableInfo {
	info := *t.Info
	info.PrimaryKey = t.KeyNames()
	return &info
}

// applyChunk writes one folded chunk: the upserts (Unchanged columns
// filled from the key's current row) as data files, and unless the chunk
// truncated the table (then nothing older survives) the keys of its
// upserts and deletes as equality delete files.
func (tt *tableTx) applyChunk(ctx context.Context, tw *cdc.TableWindow) error {
	if !tw.Truncated && len(tw.Upserts) == 0 && len(tw.Deletes) == 0 {
		return nil
	}
	c := &chunk{truncate: tw.Truncated}
	rows := make([][]any, 0, len(tw.Upserts))
	partial := false
	for _, u := range tw.Upserts {
		rows = append(rows, u.Row) // filled in place below
		partial = partial || u.Partial()
	}
	if partial && !tw.Truncated {
		if err := tt.fillReplica(ctx, tw); err != nil {
			return fmt.Errorf("fill unchanged columns: %w", err)
		}
	}
	var err error
	if c.data, err = tt.writeRows(ctx, rows); err != nil {
		return err
	}
	tt.pending = c
	if !tw.Truncated {
		keys := make([][]any, 0, len(tw.Upserts)+len(tw.Deletes))
		for _, u := range tw.Upserts {
			keys = append(keys, keyValues(tt.t, u.Row))
		}
		for _, k := range tw.Deletes {
			keys = append(keys, k)
		}
		if c.deletes, err = tt.writeKeys(ctx, keys); err != nil {
			return err
		}
	}
	return routes.Checkpoint("apply-after-truncate")
}

// fillReplica replaces the Unchanged values of partial upserts with the
// values of the row the table holds now under the upsert's origin key (the
// transaction's state: earlier chunks of the run count). A chunk after a
// TRUNCATE has none to fill from. A missing origin row falls back to the
// row under the upsert's own key: a re-run after a crash between two
// tables' commits replays a key change this table already applied.
func (tt *tableTx) fillReplica(ctx context.Context, tw *cdc.TableWindow) error {
	var want [][]any
	for _, u := range tw.Upserts {
		if u.Partial() {
			want = append(want, u.Origin, keyValues(tt.t, u.Row))
		}
	}
	found, err := tt.currentRows(ctx, want, nil)
	if err != nil {
		return err
	}
	for _, u := range tw.Upserts {
		if !u.Partial() {
			continue
		}
		row := found[tt.keyText(u.Origin)]
		if row == nil {
			row = found[tt.keyText(keyValues(tt.t, u.Row))]
		}
		fillRow(u.Row, row)
	}
	return nil
}

// fillRow replaces Unchanged values of row with the cells of the current
// row (nil: none, they stay Unchanged and are written as NULL).
func fillRow(row []any, current []any) {
	if current == nil {
		return
	}
	for i, v := range row {
		if cdc.IsUnchanged(v) {
			row[i] = current[i]
		}
	}
}

// writeRows writes rows (aligned with the capture's columns) as data files
// of the table's schema, in batches; columns the source lacks are NULL.
func (tt *tableTx) writeRows(ctx context.Context, rows [][]any) ([]iceberg.DataFile, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	files, err := tt.st.writeData(ctx, tt.batches(tt.st.target, tt.t.Columns, rows))
	tt.st.addFiles(files, nil)
	if err != nil {
		return files, err
	}
	return files, nil
}

// writeKeys writes key values as equality delete files.
func (tt *tableTx) writeKeys(ctx context.Context, keys [][]any) ([]iceberg.DataFile, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	ch := make(chan arrow.RecordBatch, writeQueue)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		var err error
		defer func() { close(ch); errc <- err }()
		for rec, berr := range tt.batches(tt.st.keySchema(), tt.t.KeyNames(), keys) {
			if err = berr; err != nil {
				return
			}
			select {
			case ch <- rec:
			case <-ctx.Done():
				rec.Release()
				err = ctx.Err()
				return
			}
		}
	}()
	files, err := tt.st.writeKeys(ctx, ch)
	tt.st.addFiles(nil, files)
	if err != nil {
		return files, err
	}
	return files, <-errc
}

// batches renders rows (aligned with cols) as batches of schema: each
// schema field takes the value of the column of its name, NULL when none.
func (tt *tableTx) batches(schema *arrow.Schema, cols []string, rows [][]any) iter.Seq2[arrow.RecordBatch, error] {
	idx := make([]int, schema.NumFields())
	for i, f := range schema.Fields() {
		idx[i] = indexOf(cols, f.Name)
	}
	return func(yield func(arrow.RecordBatch, error) bool) {
		for lo := 0; lo < len(rows); lo += applyBatchRows {
			rec, err := buildBatch(schema, idx, rows[lo:min(lo+applyBatchRows, len(rows))])
			if !yield(rec, err) || err != nil {
				return
			}
		}
	}
}

func buildBatch(schema *arrow.Schema, idx []int, rows [][]any) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, row := range rows {
		for i, c := range idx {
			var v any
			if c >= 0 && row != nil {
				v = row[c]
			}
			if err := appendCell(b.Field(i), v); err != nil {
				return nil, fmt.Errorf("column %s: %w", schema.Field(i).Name, err)
			}
		}
	}
	return b.NewRecordBatch(), nil
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}
