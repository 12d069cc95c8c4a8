package objstore

import (
	"context"
	"fmt"

	"github.com/weirhq/weir/routes"
)

// MaxCursor scans the cursor column (files keep no index; a Parquet column
// scan reads only that column) and returns its maximum as text in the
// forms PostgreSQL's route uses: integers and decimals as digits, times as
// "2006-01-02 15:04:05.000000" in UTC ("+00" appended for a zoned type).
func (e *Endpoint) MaxCursor(ctx context.Context, info *routes.TableInfo, cursor string) (string, bool, error) {
	c, ok := info.Column(cursor)
	if !ok {
		return "", false, &routes.ProbeError{Table: info.Ref.String(), Column: cursor, Problem: "cursor column does not exist"}
	}
	m, err := routes.NewCursorMax(c.Type)
	if err != nil {
		return "", false, &routes.ProbeError{Table: info.Ref.String(), Column: cursor, Problem: err.Error(), Hint: "use an integer, decimal, timestamp, date or text column as the cursor"}
	}
	ranges, err := e.Plan(ctx, info, routes.PlanOptions{Pipes: 1})
	if err != nil {
		return "", false, err
	}
	for _, r := range ranges {
		if err := e.scanMax(ctx, r, cursor, m); err != nil {
			return "", false, fmt.Errorf("max of cursor %s.%s: %w", info.Ref, cursor, err)
		}
	}
	return m.Text(), m.Seen(), nil
}

// NullCount scans the column and counts its NULLs.
func (e *Endpoint) NullCount(ctx context.Context, info *routes.TableInfo, column string) (int64, error) {
	if _, ok := info.Column(column); !ok {
		return 0, &routes.ProbeError{Table: info.Ref.String(), Column: column, Problem: "column does not exist"}
	}
	ranges, err := e.Plan(ctx, info, routes.PlanOptions{Pipes: 1})
	if err != nil {
		return 0, err
	}
	var n int64
	for _, r := range ranges {
		s, err := e.Read(ctx, r, routes.ReadOptions{Columns: []string{column}})
		if err != nil {
			return 0, fmt.Errorf("NULLs of %s.%s: %w", info.Ref, column, err)
		}
		for s.Next() {
			n += int64(s.RecordBatch().Column(0).NullN())
		}
		err = s.Err()
		s.Release()
		if err != nil {
			return 0, fmt.Errorf("NULLs of %s.%s: %w", info.Ref, column, err)
		}
	}
	return n, nil
}

func (e *Endpoint) scanMax(ctx context.Context, r routes.Range, cursor string, m *routes.CursorMax) error {
	s, err := e.Read(ctx, r, routes.ReadOptions{Columns: []string{cursor}})
	if err != nil {
		return err
	}
	defer s.Release()
	for s.Next() {
		m.Observe(s.RecordBatch().Column(0))
	}
	return s.Err()
}
