package postgres

import (
	"context"
	"fmt"

	"github.com/weirhq/weir/routes"
)

// rowsPerRange: below this a table is one range (a COPY's start-up cost
// outweighs parallelism); above it ranges are sized so no pipe idles while
// another still has a quarter of the table.
const rowsPerRange = 100_000

// Plan splits the table on an integer primary key (equal-width key ranges)
// or, without one, on ctid page ranges. The first and last ranges are open
// ended, so rows added after planning are never missed. With more than one
// range every pipe reads from one exported snapshot.
func (e *Endpoint) Plan(ctx context.Context, info *routes.TableInfo, opts routes.PlanOptions) ([]routes.Range, error) {
	n := rangeCount(info.RowEstimate, opts.Pipes)
	var preds []string
	var err error
	if key, ok := integerKey(info); ok {
		preds, err = e.keyRanges(ctx, info, key, n)
	} else {
		preds, err = e.pageRanges(ctx, info, n)
	}
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", info.Ref, err)
	}
	ranges := make([]routes.Range, len(preds))
	for i, p := range preds {
		ranges[i] = routes.Range{Table: info, Index: i, Count: len(preds), Predicate: p, Label: fmt.Sprintf("range %d/%d (%s)", i+1, len(preds), p)}
		if len(preds) == 1 {
			ranges[i].Label = "whole table"
		}
	}
	if len(ranges) > 1 && !e.snap.isPinned() {
		if err := e.snap.export(ctx, e.pool, info, len(ranges)); err != nil {
			return nil, err
		}
	}
	return ranges, nil
}

func rangeCount(estimate int64, pipes int) int {
	if pipes <= 1 || estimate < rowsPerRange {
		return 1
	}
	return int(min(int64(pipes*4), estimate/rowsPerRange+1))
}

// integerKey returns the single-column integer primary key, if any.
func integerKey(info *routes.TableInfo) (string, bool) {
	if len(info.PrimaryKey) != 1 {
		return "", false
	}
	c, _ := info.Column(info.PrimaryKey[0])
	switch c.NativeType {
	case "smallint", "integer", "bigint":
		return c.Name, true
	}
	return "", false
}

func (e *Endpoint) keyRanges(ctx context.Context, info *routes.TableInfo, key string, n int) ([]string, error) {
	var lo, hi *int64
	q := fmt.Sprintf(`SELECT min(%[1]s)::int8, max(%[1]s)::int8 FROM %[2]s`, quoteIdent(key), ident(info.Ref))
	if err := e.pool.QueryRow(ctx, q).Scan(&lo, &hi); err != nil {
		return nil, err
	}
	if lo == nil || n == 1 {
		return []string{"true"}, nil
	}
	return splitInts(quoteIdent(key), *lo, *hi, n), nil
}

// splitInts cuts [lo, hi] into n conditions; the ends are open.
func splitInts(col string, lo, hi int64, n int) []string {
	width := (uint64(hi-lo) / uint64(n)) + 1
	var preds []string
	prev := ""
	for i := 1; i < n; i++ {
		cut := lo + int64(width*uint64(i))
		if cut > hi || cut <= lo {
			break
		}
		b := fmt.Sprintf("%d", cut)
		preds = append(preds, rangePred(col, prev, b))
		prev = b
	}
	return append(preds, rangePred(col, prev, ""))
}

func rangePred(col, lo, hi string) string {
	switch {
	case lo == "" && hi == "":
		return "true"
	case lo == "":
		return fmt.Sprintf("%s < %s", col, hi)
	case hi == "":
		return fmt.Sprintf("%s >= %s", col, lo)
	}
	return fmt.Sprintf("%s >= %s AND %s < %s", col, lo, col, hi)
}

// pageRanges splits by heap pages (TID range scans, PostgreSQL 14+).
func (e *Endpoint) pageRanges(ctx context.Context, info *routes.TableInfo, n int) ([]string, error) {
	var pages int64
	q := `SELECT pg_relation_size($1::regclass) / current_setting('block_size')::int8`
	if err := e.pool.QueryRow(ctx, q, ident(info.Ref)).Scan(&pages); err != nil {
		return nil, err
	}
	if n == 1 || pages < int64(n) {
		return []string{"true"}, nil
	}
	var preds []string
	step := pages / int64(n)
	for i := 0; i < n; i++ {
		lo, hi := "", ""
		if i > 0 {
			lo = fmt.Sprintf("'(%d,0)'::tid", int64(i)*step)
		}
		if i < n-1 {
			hi = fmt.Sprintf("'(%d,0)'::tid", int64(i+1)*step)
		}
		preds = append(preds, rangePred("ctid", lo, hi))
	}
	return preds, nil
}
