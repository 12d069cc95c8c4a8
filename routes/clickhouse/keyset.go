package clickhouse

import (
	"context"
	"fmt"
	"strings"

	"github.com/weirhq/weir/routes"
)

var _ routes.KeysetSource = (*Endpoint)(nil)

// KeysetPage finds the page's last key (the first limit keys past after,
// the highest of them) and returns the range after < key <= last for
// Read. A MergeTree's primary key is not unique: rows that share the
// whole key stay in one page, as KeysetSource promises. The comparison
// is spelled a > x OR (a = x AND b > y), which every server version
// reads, with literals cast to the columns' types (ClickHouse compares
// no number with a string).
func (e *Endpoint) KeysetPage(ctx context.Context, info *routes.TableInfo, key, after []string, limit int) (routes.Range, []string, bool, error) {
	if len(key) == 0 || limit < 1 || (after != nil && len(after) != len(key)) {
		return routes.Range{}, nil, false, routes.BadInput("keyset page of %s: key %q, position %q, limit %d", info.Ref, key, after, limit)
	}
	cols := make([]routes.Column, len(key))
	names, texts, notNull := make([]string, len(key)), make([]string, len(key)), make([]string, len(key))
	for i, k := range key {
		c, ok := info.Column(k)
		if !ok {
			return routes.Range{}, nil, false, &routes.ProbeError{Table: info.Ref.String(), Column: k, Problem: "cursor column does not exist", Hint: "name an existing column with cursor:"}
		}
		cols[i], names[i] = c, quoteIdent(c.Name)
		texts[i] = "toString(" + names[i] + ")"
		if isDateTime(c.NativeType) {
			texts[i] = "toString(" + names[i] + ", 'UTC')"
		}
		notNull[i] = "isNotNull(" + names[i] + ")"
	}
	lower := strings.Join(notNull, " AND ")
	if after != nil {
		lower += " AND (" + keyCompare(cols, names, ">", after) + ")"
	}
	list := strings.Join(names, ", ")
	desc := make([]string, len(names))
	for i, n := range names {
		desc[i] = n + " DESC"
	}
	q := fmt.Sprintf("SELECT %s FROM (SELECT %s FROM %s WHERE %s ORDER BY %s LIMIT %d) ORDER BY %s LIMIT 1",
		strings.Join(texts, ", "), list, ident(info.Ref), lower, list, limit, strings.Join(desc, ", "))
	last, ok, err := queryRow(ctx, e.conn, q)
	if err != nil {
		return routes.Range{}, nil, false, fmt.Errorf("keyset page of %s after %q: %w", info.Ref, after, err)
	}
	if !ok {
		return routes.Range{}, nil, false, nil
	}
	pred := lower + " AND (" + keyCompare(cols, names, "<=", last) + ")"
	return routes.Range{Table: info, Index: 0, Count: 1, Predicate: pred,
		Label: fmt.Sprintf("keyset (%s) in (%s, %s]", list, strings.Join(after, ", "), strings.Join(last, ", "))}, last, true, nil
}

// keyCompare is the lexicographic comparison of the key with vals.
func keyCompare(cols []routes.Column, names []string, op string, vals []string) string {
	strict := "<"
	if op == ">" {
		strict = ">"
	}
	n := len(names) - 1
	expr := fmt.Sprintf("%s %s %s", names[n], op, cursorLiteral(cols[n], vals[n]))
	for i := n - 1; i >= 0; i-- {
		lit := cursorLiteral(cols[i], vals[i])
		expr = fmt.Sprintf("%s %s %s OR (%s = %s AND (%s))", names[i], strict, lit, names[i], lit, expr)
	}
	return expr
}
