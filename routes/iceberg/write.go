package iceberg

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
)

// writeQueue bounds the batches a data file writer holds queued: with the
// batch being converted and the Parquet row group, a pipe's memory.
const writeQueue = 2

// keyFileBytes bounds an equality delete file: its writer packs this much
// key data in memory before it writes.
const keyFileBytes = 8 << 20

// Write converts one pipe's batches to the table's schema and writes them
// as Parquet data files as they come (and, for merge, their keys as
// equality delete files). The files belong to no snapshot until Commit.
func (st *stage) Write(ctx context.Context, s routes.Stream) (int64, error) {
	conv, err := newConverter(s.Schema(), st.target, st.opts.Allocator)
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", st.dest, err)
	}
	var rows atomic.Int64
	records := st.records(ctx, s, conv, &rows)
	if st.opts.Mode == routes.ModeMerge {
		err = st.writeMerge(ctx, records)
	} else {
		var files []iceberg.DataFile
		files, err = st.writeData(ctx, records)
		st.addFiles(files, nil)
	}
	if err != nil {
		return rows.Load(), fmt.Errorf("write %s: %w", st.dest, err)
	}
	return rows.Load(), nil
}

// records reads the stream, converting each batch; the consumer owns (and
// releases) what it is given.
func (st *stage) records(ctx context.Context, s routes.Stream, conv *converter, rows *atomic.Int64) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for s.Next() {
			rec := s.RecordBatch()
			out, err := conv.convert(ctx, rec)
			if err != nil {
				yield(nil, err)
				return
			}
			rows.Add(rec.NumRows())
			if !yield(out, nil) {
				return
			}
		}
		if err := s.Err(); err != nil {
			yield(nil, err)
		} else if err := ctx.Err(); err != nil {
			yield(nil, err)
		}
	}
}

// writeData writes data files named with a fresh write id; the files
// written before an error are kept on the stage, for Abort to remove.
// They are written by weir's encoder (dataWriter) unless the table needs
// iceberg-go's writer (newDataWriter says when).
func (st *stage) writeData(ctx context.Context, records iter.Seq2[arrow.RecordBatch, error]) ([]iceberg.DataFile, error) {
	w, err := st.newDataWriter(ctx)
	if err != nil {
		return nil, fmt.Errorf("data files: %w", err)
	}
	if w != nil {
		files, err := w.write(ctx, st.newWriteID(), records)
		if err != nil {
			return files, fmt.Errorf("data files: %w", err)
		}
		return files, nil
	}
	var files []iceberg.DataFile
	opts := []table.WriteRecordOption{table.WithWriteUUID(st.newWriteID()), table.WithRecordBatchBufferSize(writeQueue)}
	for df, err := range table.WriteRecords(ctx, st.tbl, st.target, records, opts...) {
		if err != nil {
			return files, fmt.Errorf("data files: %w", err)
		}
		files = append(files, df)
	}
	return files, nil
}

// writeMerge writes the rows as data files and, at the same time, their
// keys as equality delete files: committed in one row delta, the deletes
// retire every older row with a key the run brings (an upsert).
func (st *stage) writeMerge(ctx context.Context, records iter.Seq2[arrow.RecordBatch, error]) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	keys := make(chan arrow.RecordBatch, writeQueue)
	type result struct {
		files []iceberg.DataFile
		err   error
	}
	done := make(chan result, 1)
	go func() {
		files, err := st.writeKeys(ctx, keys)
		if err != nil {
			cancel()
		}
		done <- result{files, err}
	}()
	files, err := st.writeData(ctx, st.teeKeys(ctx, records, keys))
	if err != nil {
		cancel()
	}
	kr := <-done
	st.addFiles(files, kr.files)
	if err != nil {
		return err
	}
	return kr.err
}

// teeKeys passes records on and sends the key columns of each to keys,
// which it closes at the end.
func (st *stage) teeKeys(ctx context.Context, records iter.Seq2[arrow.RecordBatch, error], keys chan<- arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	keySchema := st.keySchema()
	return func(yield func(arrow.RecordBatch, error) bool) {
		defer close(keys)
		for rec, err := range records {
			if err != nil {
				yield(nil, err)
				return
			}
			k := st.projectKeys(rec, keySchema)
			if !st.keys.add(k) {
				k.Release()
				rec.Release()
				yield(nil, routes.RepeatedKey(st.info.Ref, st.dest, st.opts.Key, st.keys.example))
				return
			}
			select {
			case keys <- k:
			case <-ctx.Done():
				k.Release()
				rec.Release()
				yield(nil, ctx.Err())
				return
			}
			if !yield(rec, nil) {
				return
			}
		}
	}
}

func (st *stage) keySchema() *arrow.Schema {
	fields := make([]arrow.Field, len(st.keyIDs))
	for i, name := range st.keyNames() {
		fields[i] = st.target.Field(st.target.FieldIndices(name)[0])
	}
	return arrow.NewSchema(fields, nil)
}

func (st *stage) projectKeys(rec arrow.RecordBatch, keySchema *arrow.Schema) arrow.RecordBatch {
	cols := make([]arrow.Array, keySchema.NumFields())
	for i, f := range keySchema.Fields() {
		cols[i] = rec.Column(rec.Schema().FieldIndices(f.Name)[0])
	}
	return array.NewRecordBatch(keySchema, cols, rec.NumRows())
}

// writeKeys writes equality delete files from a throwaway transaction
// whose target file size keeps the writer's packing buffer small.
func (st *stage) writeKeys(ctx context.Context, keys <-chan arrow.RecordBatch) ([]iceberg.DataFile, error) {
	defer func() {
		for k := range keys {
			k.Release()
		}
	}()
	tx := st.tbl.NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{table.WriteTargetFileSizeBytesKey: strconv.Itoa(keyFileBytes)}); err != nil {
		return nil, err
	}
	seq := func(yield func(arrow.RecordBatch, error) bool) {
		for k := range keys {
			ok := yield(k, nil)
			k.Release() // the delete writer retains what it keeps (unlike WriteRecords, it releases only that)
			if !ok {
				return
			}
		}
	}
	files, err := tx.WriteEqualityDeletes(ctx, st.keyIDs, seq)
	if err != nil {
		return files, fmt.Errorf("equality delete files: %w", err)
	}
	return files, nil
}
