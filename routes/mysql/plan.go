package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/weirhq/weir/routes"
)

// rowsPerRange: below this a table is one range (a query's start-up cost
// outweighs parallelism); above it ranges are sized so no pipe idles while
// another still has a quarter of the table.
const rowsPerRange = 100_000

// Plan splits the table on a single-column integer primary key into
// equal-width key ranges (min/max split, first and last ranges open ended,
// so rows added after planning are never missed); any other table is one
// range. Each range is one SELECT, consistent in itself; MySQL cannot share
// one snapshot between connections, so parallel ranges are not one
// snapshot (see doc.go).
func (e *Endpoint) Plan(ctx context.Context, info *routes.TableInfo, opts routes.PlanOptions) ([]routes.Range, error) {
	n := rangeCount(info.RowEstimate, opts.Pipes)
	preds := []string{"TRUE"}
	if key, ok := integerKey(info); ok && n > 1 {
		var err error
		if preds, err = e.keyRanges(ctx, info, key, n, opts); err != nil {
			return nil, fmt.Errorf("plan %s: %w", info.Ref, err)
		}
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

// integerKey returns the single-column integer primary key, if any.
func integerKey(info *routes.TableInfo) (string, bool) {
	if len(info.PrimaryKey) != 1 {
		return "", false
	}
	c, _ := info.Column(info.PrimaryKey[0])
	return c.Name, isInteger(c.NativeType)
}

func isInteger(nativeType string) bool {
	ct := parseColumnType(nativeType)
	_, ok := signedKinds[ct.dataType]
	return ok && ct.dataType != "year"
}

// keyRanges reads the key's bounds (past the watermark, when the key is
// the cursor) and cuts them into n ranges.
func (e *Endpoint) keyRanges(ctx context.Context, info *routes.TableInfo, key string, n int, opts routes.PlanOptions) ([]string, error) {
	col := quoteIdent(key)
	q := fmt.Sprintf("SELECT MIN(%[1]s), MAX(%[1]s) FROM %[2]s", col, ident(info.Ref))
	if opts.After != "" && opts.Cursor == key {
		lit, err := cursorLiteral(info, key, opts.After)
		if err != nil {
			return nil, err
		}
		q += fmt.Sprintf(" WHERE %s > %s", col, lit)
	}
	var lo, hi sql.NullString
	if err := e.db.QueryRowContext(ctx, q).Scan(&lo, &hi); err != nil {
		return nil, err
	}
	if !lo.Valid {
		return []string{"TRUE"}, nil
	}
	return splitInts(col, lo.String, hi.String, n)
}

// splitInts cuts [lo, hi] into at most n conditions; the ends are open.
// big.Int keeps bigint unsigned keys above 2^63 exact.
func splitInts(col, loText, hiText string, n int) ([]string, error) {
	lo, ok1 := new(big.Int).SetString(loText, 10)
	hi, ok2 := new(big.Int).SetString(hiText, 10)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("key bounds %q..%q are not integers", loText, hiText)
	}
	width := new(big.Int).Sub(hi, lo)
	width.Div(width, big.NewInt(int64(n))).Add(width, big.NewInt(1))
	var preds []string
	prev := ""
	cut := new(big.Int).Set(lo)
	for i := 1; i < n; i++ {
		cut.Add(cut, width)
		if cut.Cmp(hi) > 0 {
			break
		}
		b := cut.String()
		preds = append(preds, rangePred(col, prev, b))
		prev = b
	}
	return append(preds, rangePred(col, prev, "")), nil
}

func rangePred(col, lo, hi string) string {
	switch {
	case lo == "" && hi == "":
		return "TRUE"
	case lo == "":
		return fmt.Sprintf("%s < %s", col, hi)
	case hi == "":
		return fmt.Sprintf("%s >= %s", col, lo)
	}
	return fmt.Sprintf("%s >= %s AND %s < %s", col, lo, col, hi)
}

// MaxCursor returns the highest value of the cursor column, text-encoded so
// this source compares it back in SQL: integers and decimals as decimal
// text, DATETIME and TIMESTAMP as "2006-01-02 15:04:05.000000" (UTC: the
// session's time zone is +00:00), DATE as "2006-01-02", anything else as
// the server prints it. ok is false for an empty table.
func (e *Endpoint) MaxCursor(ctx context.Context, info *routes.TableInfo, cursor string) (string, bool, error) {
	c, found := info.Column(cursor)
	if !found {
		return "", false, cursorMissing(info, cursor)
	}
	var max sql.NullString
	q := fmt.Sprintf("SELECT MAX(%s) FROM %s", quoteIdent(c.Name), ident(info.Ref))
	if err := e.db.QueryRowContext(ctx, q).Scan(&max); err != nil {
		return "", false, fmt.Errorf("max of %s.%s: %w", info.Ref, cursor, err)
	}
	if !max.Valid {
		return "", false, nil
	}
	return normalizeCursor(parseColumnType(c.NativeType).dataType, max.String), true, nil
}

// NullCount counts the rows whose column is NULL.
func (e *Endpoint) NullCount(ctx context.Context, info *routes.TableInfo, column string) (int64, error) {
	var n int64
	q := fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE %s IS NULL", ident(info.Ref), quoteIdent(column))
	if err := e.db.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return 0, fmt.Errorf("NULLs of %s.%s: %w", info.Ref, column, err)
	}
	return n, nil
}

// cursorLayout is the fixed-width text of a DATETIME or TIMESTAMP cursor,
// whatever the column's fractional digits: fixed width sorts as text.
const cursorLayout = "2006-01-02 15:04:05.000000"

// normalizeCursor gives every DATETIME(n) and TIMESTAMP(n) maximum six
// fractional digits.
func normalizeCursor(dataType, v string) string {
	if dataType != "datetime" && dataType != "timestamp" {
		return v
	}
	t, err := time.Parse("2006-01-02 15:04:05.999999", v)
	if err != nil {
		return v
	}
	return t.Format(cursorLayout)
}

// cursorLiteral renders a watermark for comparison with the cursor column:
// numbers unquoted (a quoted number compares as a double and loses
// precision past 2^53), everything else as a string literal that MySQL
// converts to the column's type.
func cursorLiteral(info *routes.TableInfo, cursor, value string) (string, error) {
	c, ok := info.Column(cursor)
	if !ok {
		return "", cursorMissing(info, cursor)
	}
	ct := parseColumnType(c.NativeType)
	numeric := isInteger(c.NativeType) || ct.dataType == "decimal" || ct.dataType == "numeric"
	if !numeric {
		return quoteLiteral(value), nil
	}
	if !isDecimalText(value) {
		return "", routes.BadInput("watermark %q of %s.%s is not a number", value, info.Ref, cursor)
	}
	return value, nil
}

func cursorMissing(info *routes.TableInfo, cursor string) error {
	return &routes.ProbeError{Table: info.Ref.String(), Column: cursor, Problem: "cursor column does not exist", Hint: "name an existing column with --cursor"}
}

// isDecimalText accepts [-]digits[.digits].
func isDecimalText(s string) bool {
	s = strings.TrimPrefix(s, "-")
	whole, frac, dot := strings.Cut(s, ".")
	return allDigits(whole) && (!dot || allDigits(frac))
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
