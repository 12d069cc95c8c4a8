package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/weirhq/weir/routes"
)

var _ routes.KeysetSource = (*Endpoint)(nil)

// KeysetPage finds the page's last key (the first limit keys past after,
// the highest of them) and returns the range after < key <= last, which
// Read streams like any other range. The key comparison is spelled out
// as a > x OR (a = x AND b > y): MariaDB's range optimizer uses an index
// for that form, not always for the row form (a, b) > (x, y).
func (e *Endpoint) KeysetPage(ctx context.Context, info *routes.TableInfo, key, after []string, limit int) (routes.Range, []string, bool, error) {
	if len(key) == 0 {
		return routes.Range{}, nil, false, routes.BadInput("keyset page of %s: no key columns", info.Ref)
	}
	if after != nil && len(after) != len(key) {
		return routes.Range{}, nil, false, routes.BadInput("keyset position %q of %s has %d values for the key (%s)", after, info.Ref, len(after), strings.Join(key, ", "))
	}
	if limit < 1 {
		return routes.Range{}, nil, false, routes.BadInput("keyset page of %s: limit %d, want ≥ 1", info.Ref, limit)
	}
	names := make([]string, len(key))
	types := make([]string, len(key))
	notNull := make([]string, len(key))
	for i, k := range key {
		c, ok := info.Column(k)
		if !ok {
			return routes.Range{}, nil, false, &routes.ProbeError{Table: info.Ref.String(), Column: k, Problem: "cursor column does not exist", Hint: "name an existing column with cursor:"}
		}
		names[i], types[i] = quoteIdent(c.Name), parseColumnType(c.NativeType).dataType
		notNull[i] = names[i] + " IS NOT NULL"
	}
	lower := strings.Join(notNull, " AND ")
	if after != nil {
		cmp, err := keyCompare(info, key, names, ">", after)
		if err != nil {
			return routes.Range{}, nil, false, err
		}
		lower += " AND " + cmp
	}
	list := strings.Join(names, ", ")
	desc := make([]string, len(names))
	for i, n := range names {
		desc[i] = n + " DESC"
	}
	q := fmt.Sprintf("SELECT %s FROM (SELECT %s FROM %s WHERE %s ORDER BY %s LIMIT %d) p ORDER BY %s LIMIT 1",
		list, list, ident(info.Ref), lower, list, limit, strings.Join(desc, ", "))
	raw := make([]sql.NullString, len(key))
	dest := make([]any, len(key))
	for i := range raw {
		dest[i] = &raw[i]
	}
	if err := e.db.QueryRowContext(ctx, q).Scan(dest...); errors.Is(err, sql.ErrNoRows) {
		return routes.Range{}, nil, false, nil
	} else if err != nil {
		return routes.Range{}, nil, false, fmt.Errorf("keyset page of %s after %q: %w", info.Ref, after, err)
	}
	last := make([]string, len(key))
	for i, r := range raw {
		last[i] = normalizeCursor(types[i], r.String)
	}
	upper, err := keyCompare(info, key, names, "<=", last)
	if err != nil {
		return routes.Range{}, nil, false, err
	}
	return routes.Range{Table: info, Index: 0, Count: 1, Predicate: lower + " AND " + upper,
		Label: fmt.Sprintf("keyset (%s) in (%s, %s]", list, strings.Join(after, ", "), strings.Join(last, ", "))}, last, true, nil
}

// keyCompare is the lexicographic comparison of the key with vals:
// for op ">" a > x OR (a = x AND b > y); for "<=" a < x OR (a = x AND b <= y).
// The first column also gets its plain bound (a >= x, a <= x) so the
// optimizer sees a range on it.
func keyCompare(info *routes.TableInfo, key, names []string, op string, vals []string) (string, error) {
	lits := make([]string, len(vals))
	for i, v := range vals {
		lit, err := cursorLiteral(info, key[i], v)
		if err != nil {
			return "", err
		}
		lits[i] = lit
	}
	strict := "<"
	if op == ">" {
		strict = ">"
	}
	n := len(names) - 1
	expr := fmt.Sprintf("%s %s %s", names[n], op, lits[n])
	for i := n - 1; i >= 0; i-- {
		expr = fmt.Sprintf("%s %s %s OR (%s = %s AND (%s))", names[i], strict, lits[i], names[i], lits[i], expr)
	}
	if n == 0 {
		return expr, nil
	}
	return fmt.Sprintf("%s %s= %s AND (%s)", names[0], strict, lits[0], expr), nil
}
