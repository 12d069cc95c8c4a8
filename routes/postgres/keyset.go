package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir/routes"
)

var _ routes.KeysetSource = (*Endpoint)(nil)

// KeysetPage finds the page's last key with an index-friendly query (the
// first limit keys past after, the highest of them) and returns the range
// after < key <= last, which Read copies out like any other range. Keys
// compare as row values, (a, b) > (x, y), which PostgreSQL answers from a
// matching index.
func (e *Endpoint) KeysetPage(ctx context.Context, info *routes.TableInfo, key, after []string, limit int) (routes.Range, []string, bool, error) {
	cols, err := keysetColumns(info, key)
	if err != nil {
		return routes.Range{}, nil, false, err
	}
	if after != nil && len(after) != len(key) {
		return routes.Range{}, nil, false, routes.BadInput("keyset position %q of %s has %d values for the key (%s)", after, info.Ref, len(after), strings.Join(key, ", "))
	}
	if limit < 1 {
		return routes.Range{}, nil, false, routes.BadInput("keyset page of %s: limit %d, want ≥ 1", info.Ref, limit)
	}
	names, texts := make([]string, len(cols)), make([]string, len(cols))
	var notNull []string
	for i, c := range cols {
		names[i] = quoteIdent(c.Name)
		texts[i] = cursorText(c, names[i])
		notNull = append(notNull, names[i]+" IS NOT NULL")
	}
	lower := strings.Join(notNull, " AND ")
	if after != nil {
		lower += " AND " + rowCompare(names, ">", after)
	}
	list := strings.Join(names, ", ")
	q := fmt.Sprintf("SELECT %s FROM (SELECT %s FROM %s WHERE %s ORDER BY %s LIMIT %d) p ORDER BY %s LIMIT 1",
		strings.Join(texts, ", "), list, ident(info.Ref), lower, list, limit, descList(names))
	last := make([]string, len(cols))
	dest := make([]any, len(cols))
	for i := range last {
		dest[i] = &last[i]
	}
	if err := e.pool.QueryRow(ctx, q).Scan(dest...); errors.Is(err, pgx.ErrNoRows) {
		return routes.Range{}, nil, false, nil
	} else if err != nil {
		return routes.Range{}, nil, false, fmt.Errorf("keyset page of %s after %q: %w", info.Ref, after, err)
	}
	pred := lower + " AND " + rowCompare(names, "<=", last)
	return routes.Range{Table: info, Index: 0, Count: 1, Predicate: pred,
		Label: fmt.Sprintf("keyset (%s) in (%s, %s]", list, strings.Join(after, ", "), strings.Join(last, ", "))}, last, true, nil
}

// keysetColumns resolves the key's columns; a missing one is a probe error.
func keysetColumns(info *routes.TableInfo, key []string) ([]routes.Column, error) {
	if len(key) == 0 {
		return nil, routes.BadInput("keyset page of %s: no key columns", info.Ref)
	}
	cols := make([]routes.Column, len(key))
	for i, k := range key {
		c, ok := info.Column(k)
		if !ok {
			return nil, &routes.ProbeError{Table: info.Ref.String(), Column: k, Problem: "cursor column does not exist", Hint: "name an existing column with cursor:"}
		}
		cols[i] = c
	}
	return cols, nil
}

// rowCompare is (a, b) op ('x', 'y'): the literals take the columns' types.
func rowCompare(names []string, op string, vals []string) string {
	lits := make([]string, len(vals))
	for i, v := range vals {
		lits[i] = quoteLiteral(v)
	}
	if len(names) == 1 {
		return fmt.Sprintf("%s %s %s", names[0], op, lits[0])
	}
	return fmt.Sprintf("(%s) %s (%s)", strings.Join(names, ", "), op, strings.Join(lits, ", "))
}

func descList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		// p.: the page's column, not the ::text output column of that
		// name, which would order the keys as text (999 above 4000)
		out[i] = "p." + n + " DESC"
	}
	return strings.Join(out, ", ")
}
