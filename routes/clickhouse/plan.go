package clickhouse

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/weirhq/weir/routes"
)

// rowsPerRange: below this a table is one range.
const rowsPerRange = 100_000

// Plan splits the table on its first sorting-key column when that is an
// integer (equal-width ranges with open ends, so rows added meanwhile are
// not missed), else into cityHash64 buckets of the key (or all columns).
// ClickHouse has no snapshots: ranges read at slightly different times.
func (e *Endpoint) Plan(ctx context.Context, info *routes.TableInfo, opts routes.PlanOptions) ([]routes.Range, error) {
	n := rangeCount(info.RowEstimate, opts.Pipes)
	preds := []string{"1"}
	var err error
	if n > 1 {
		if key, ok := integerKey(info); ok {
			preds, err = e.keyRanges(ctx, info, key, n)
		} else {
			preds = hashBuckets(info, n)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", info.Ref, err)
	}
	ranges := make([]routes.Range, len(preds))
	for i, p := range preds {
		ranges[i] = routes.Range{Table: info, Index: i, Count: len(preds), Predicate: p, Label: fmt.Sprintf("range %d/%d (%s)", i+1, len(preds), p)}
	}
	return ranges, nil
}

func rangeCount(estimate int64, pipes int) int {
	if pipes <= 1 || estimate < rowsPerRange {
		return 1
	}
	return int(min(int64(pipes*4), estimate/rowsPerRange+1))
}

// integerKey returns the first primary-key column when it is a plain
// (not Nullable) integer.
func integerKey(info *routes.TableInfo) (string, bool) {
	if len(info.PrimaryKey) == 0 {
		return "", false
	}
	c, _ := info.Column(info.PrimaryKey[0])
	if intWidth(c.NativeType) == 0 {
		return "", false
	}
	return c.Name, true
}

func (e *Endpoint) keyRanges(ctx context.Context, info *routes.TableInfo, key string, n int) ([]string, error) {
	col := quoteIdent(key)
	q := fmt.Sprintf("SELECT toString(min(%[1]s)), toString(max(%[1]s)), toString(count()) FROM %[2]s", col, ident(info.Ref))
	row, _, err := queryRow(ctx, e.conn, q)
	if err != nil || row[2] == "0" {
		return []string{"1"}, err
	}
	lo, err1 := strconv.ParseInt(row[0], 10, 64)
	hi, err2 := strconv.ParseInt(row[1], 10, 64)
	if err1 != nil || err2 != nil { // UInt64 beyond int64: hash instead
		return hashBuckets(info, n), nil
	}
	return splitInts(col, lo, hi, n), nil
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
		b := strconv.FormatInt(cut, 10)
		preds = append(preds, rangePred(col, prev, b))
		prev = b
	}
	return append(preds, rangePred(col, prev, ""))
}

func rangePred(col, lo, hi string) string {
	switch {
	case lo == "" && hi == "":
		return "1"
	case lo == "":
		return fmt.Sprintf("%s < %s", col, hi)
	case hi == "":
		return fmt.Sprintf("%s >= %s", col, lo)
	}
	return fmt.Sprintf("%s >= %s AND %s < %s", col, lo, col, hi)
}

// hashBuckets splits rows by cityHash64 of the key columns (all columns
// without a key) modulo n. The hash of a NULL is NULL, in no bucket:
// such rows go to bucket 0.
func hashBuckets(info *routes.TableInfo, n int) []string {
	names := info.PrimaryKey
	if len(names) == 0 {
		for _, c := range info.Columns {
			names = append(names, c.Name)
		}
	}
	h := "ifNull(cityHash64(" + strings.Join(quoteAll(names), ", ") + "), 0)"
	preds := make([]string, n)
	for i := range preds {
		preds[i] = fmt.Sprintf("%s %% %d = %d", h, n, i)
	}
	return preds
}

func quoteAll(names []string) []string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quoteIdent(n)
	}
	return q
}
