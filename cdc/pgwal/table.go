package pgwal

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

const columnsSQL = `
SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
       coalesce(array_position(i.indkey::int2[], a.attnum) - array_lower(i.indkey::int2[], 1) + 1, 0)
FROM pg_attribute a
LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum`

// table is a captured table with what bootstrap needs to create it.
type table struct {
	cdc.Table
	keyPos []int // per column: 1-based position in the primary key, 0 if none
	// saved is the table's own saved position. A destination that
	// commits table by table (Iceberg) can hold some tables ahead of the
	// run's start (the lowest); a replica skips the transactions it
	// holds already (see decoder.change).
	saved pglogrepl.LSN
}

// probe reads a source table's columns and primary key. A table without
// one is bad input: changes could not be applied by key.
func probe(ctx context.Context, src *pgx.Conn, p Pair) (*table, error) {
	rows, err := src.Query(ctx, columnsSQL, ident(p.Source))
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", p.Source, err)
	}
	t := &table{Table: cdc.Table{Source: p.Source, Dest: p.Dest}}
	for rows.Next() {
		var name, typ string
		var notNull bool
		var pos int
		if err := rows.Scan(&name, &typ, &notNull, &pos); err != nil {
			return nil, fmt.Errorf("probe %s: %w", p.Source, err)
		}
		t.Columns, t.Types = append(t.Columns, name), append(t.Types, typ)
		t.keyPos = append(t.keyPos, pos)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("probe %s: %w", p.Source, err)
	}
	if err := t.orderKey(); err != nil {
		return nil, err
	}
	return t, checkIdentity(ctx, src, p.Source)
}

// checkIdentity refuses REPLICA IDENTITY NOTHING and USING INDEX: deletes
// and key changes must carry the primary key (DEFAULT) or the whole old
// row (FULL).
func checkIdentity(ctx context.Context, src *pgx.Conn, ref routes.TableRef) error {
	var kind string
	if err := src.QueryRow(ctx, `SELECT relreplident::text FROM pg_class WHERE oid = $1::regclass`, ident(ref)).Scan(&kind); err != nil {
		return fmt.Errorf("probe %s: replica identity: %w", ref, err)
	}
	if kind == "d" || kind == "f" {
		return nil
	}
	return &routes.ProbeError{Table: ref.String(), Problem: "REPLICA IDENTITY is NOTHING or USING INDEX",
		Hint: "ALTER TABLE … REPLICA IDENTITY DEFAULT (or FULL) so deletes and key changes carry the primary key"}
}

// orderKey fills Table.Key in primary key order.
func (t *table) orderKey() error {
	for pos := 1; ; pos++ {
		found := false
		for i, p := range t.keyPos {
			if p == pos {
				t.Key, found = append(t.Key, i), true
			}
		}
		if !found {
			break
		}
	}
	if len(t.Key) == 0 {
		return &routes.ProbeError{Table: t.Source.String(), Problem: "no primary key",
			Hint: "log_based needs a primary key to apply updates and deletes; add one"}
	}
	return nil
}

func ident(t routes.TableRef) string { return pgx.Identifier{t.Schema, t.Name}.Sanitize() }

func identList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quoteIdent(n)
	}
	return strings.Join(q, ", ")
}
