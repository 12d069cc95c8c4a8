package iceberg

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// maxValue is a column's maximum at snap: from the data files' upper
// bounds when those are exact, else by scanning the column.
func maxValue(ctx context.Context, tbl *table.Table, snap *table.Snapshot, f iceberg.NestedField) (string, bool, error) {
	tasks, err := tbl.Scan(table.WithSnapshotID(snap.SnapshotID)).PlanFiles(ctx)
	if err != nil {
		return "", false, fmt.Errorf("plan %s: %w", f.Name, err)
	}
	if v, ok, exact := statsMax(tasks, f); exact {
		return v, ok, nil
	}
	return scanMax(ctx, tbl, snap, f)
}

// nullCount counts the NULLs of one column at snap.
func nullCount(ctx context.Context, tbl *table.Table, snap *table.Snapshot, f iceberg.NestedField) (int64, error) {
	tasks, err := tbl.Scan(table.WithSnapshotID(snap.SnapshotID)).PlanFiles(ctx)
	if err != nil {
		return 0, fmt.Errorf("plan %s: %w", f.Name, err)
	}
	if n, exact := statsNulls(tasks, f); exact {
		return n, nil
	}
	scan := tbl.Scan(table.WithSnapshotID(snap.SnapshotID), table.WithSelectedFields(f.Name))
	_, batches, err := scan.ToArrowRecords(ctx)
	if err != nil {
		return 0, fmt.Errorf("scan %s: %w", f.Name, err)
	}
	var n int64
	for rec, err := range batches {
		if err != nil {
			return 0, fmt.Errorf("scan %s: %w", f.Name, err)
		}
		n += int64(rec.Column(0).NullN())
		rec.Release()
	}
	return n, nil
}

// statsNulls sums the data files' null counts of a column: exact when
// every file has one and no delete applies (a delete may remove a NULL).
func statsNulls(tasks []table.FileScanTask, f iceberg.NestedField) (n int64, exact bool) {
	for _, t := range tasks {
		if len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0 {
			return 0, false
		}
		c, has := t.File.NullValueCounts()[f.ID]
		if !has {
			return 0, false
		}
		n += c
	}
	return n, true
}

// statsMax reads the upper bounds of integer and time columns. They are
// exact unless a file lacks them or deletes may have removed the maximum
// (strings are truncated in stats, so they are never exact).
func statsMax(tasks []table.FileScanTask, f iceberg.NestedField) (max string, ok, exact bool) {
	switch f.Type.(type) {
	case iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType, iceberg.TimestampType, iceberg.TimestampTzType:
	default:
		return "", false, false
	}
	var best iceberg.Literal
	var bestN int64
	for _, t := range tasks {
		if len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0 {
			return "", false, false
		}
		df := t.File
		raw, has := df.UpperBoundValues()[f.ID]
		if !has {
			if df.NullValueCounts()[f.ID] == df.Count() && df.Count() > 0 {
				continue // only nulls
			}
			return "", false, false
		}
		lit, err := iceberg.LiteralFromBytes(f.Type, raw)
		if err != nil {
			return "", false, false
		}
		if n := ordinal(lit.Any()); best == nil || n > bestN {
			best, bestN = lit, n
		}
	}
	if best == nil {
		return "", false, true
	}
	return cursorText(f.Type, best.Any()), true, true
}

func ordinal(v any) int64 {
	switch x := v.(type) {
	case int32:
		return int64(x)
	case int64:
		return x
	case iceberg.Date:
		return int64(x)
	case iceberg.Timestamp:
		return int64(x)
	}
	return 0
}

// scanMax scans one column for its maximum.
func scanMax(ctx context.Context, tbl *table.Table, snap *table.Snapshot, f iceberg.NestedField) (string, bool, error) {
	scan := tbl.Scan(table.WithSnapshotID(snap.SnapshotID), table.WithSelectedFields(f.Name))
	_, batches, err := scan.ToArrowRecords(ctx)
	if err != nil {
		return "", false, fmt.Errorf("scan %s: %w", f.Name, err)
	}
	var m columnMax
	for rec, err := range batches {
		if err != nil {
			return "", false, fmt.Errorf("scan %s: %w", f.Name, err)
		}
		err = m.add(rec.Column(0))
		rec.Release()
		if err != nil {
			return "", false, fmt.Errorf("max of %s: %w", f.Name, err)
		}
	}
	if !m.ok {
		return "", false, nil
	}
	return m.text(f.Type), true, nil
}

// columnMax tracks the maximum of integer-like or string arrays.
type columnMax struct {
	ok  bool
	n   int64
	s   string
	str bool
}

func (m *columnMax) add(arr arrow.Array) error {
	for i := 0; i < arr.Len(); i++ {
		if arr.IsNull(i) {
			continue
		}
		switch a := arr.(type) {
		case *array.String:
			m.addString(a.Value(i))
		case *array.LargeString:
			m.addString(a.Value(i))
		case *array.Int32:
			m.addInt(int64(a.Value(i)))
		case *array.Int64:
			m.addInt(a.Value(i))
		case *array.Date32:
			m.addInt(int64(a.Value(i)))
		case *array.Timestamp:
			m.addInt(int64(a.Value(i)))
		default:
			return fmt.Errorf("type %s cannot be a cursor (use an integer, date, timestamp or string column)", arr.DataType())
		}
	}
	return nil
}

func (m *columnMax) addInt(v int64) {
	if !m.ok || v > m.n {
		m.n, m.ok = v, true
	}
}

func (m *columnMax) addString(v string) {
	if !m.ok || v > m.s {
		m.s, m.ok, m.str = v, true, true
	}
}

func (m *columnMax) text(t iceberg.Type) string {
	switch t.(type) {
	case iceberg.DateType:
		return cursorText(t, iceberg.Date(m.n))
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return cursorText(t, iceberg.Timestamp(m.n))
	}
	if m.str {
		return m.s
	}
	return fmt.Sprint(m.n)
}
