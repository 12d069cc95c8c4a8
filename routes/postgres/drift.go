package postgres

import (
	"context"
	"fmt"
	"regexp"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// Schema drift between runs (append, merge): the source's columns — the
// staging table's, created from this run's probe — against the existing
// destination's. A widening the destination can take (decimal precision
// or scale, varchar length, integer width, a new nullable column) is an
// ALTER TABLE run inside the commit transaction, so the new type and the
// rows land together or not at all; a new NOT NULL column is refused
// before a row moves. Never an implicit cast that rounds or cuts.

type pgColumn struct {
	name    string
	typ     string // format_type: numeric(12,4), character varying(20), bigint, …
	notNull bool
}

func relColumns(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, t routes.TableRef) ([]pgColumn, error) {
	rows, err := q.Query(ctx, `SELECT attname, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute
WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`, ident(t))
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", t, err)
	}
	var out []pgColumn
	var c pgColumn
	_, err = pgx.ForEachRow(rows, []any{&c.name, &c.typ, &c.notNull}, func() error {
		out = append(out, c)
		return nil
	})
	return out, err
}

// checkDrift plans, under the lock, what an append or merge into an
// existing destination must change first.
func (st *stage) checkDrift(ctx context.Context) error {
	if st.opts.Mode == routes.ModeReplace {
		return nil
	}
	exists, err := st.destExists(ctx)
	if err != nil || !exists {
		return err
	}
	st.drift, err = st.planDrift(ctx)
	return err
}

// planDrift returns the ALTER TABLE statements that let dest hold what the
// staging table holds, or bad input naming the column when it cannot.
func (st *stage) planDrift(ctx context.Context) ([]string, error) {
	staged, err := relColumns(ctx, st.lock.conn, st.table)
	if err != nil {
		return nil, err
	}
	have, err := relColumns(ctx, st.lock.conn, st.dest)
	if err != nil {
		return nil, err
	}
	return driftSQL(st.dest, staged, have)
}

// evolveReplicas widens each CDC replica to its source's columns as this
// run probed them, inside the apply transaction tx (the same rule as a
// bulk append: a change after the ALTER on the source lands exact, never
// rounded to the replica's old scale). The source's types are read back
// from a temp table created with them, so both sides are format_type's.
func evolveReplicas(ctx context.Context, tx pgx.Tx, tables []*cdc.Table) error {
	for _, t := range tables {
		if t.Info == nil {
			continue
		}
		if err := routes.CheckColumnNames(t.Info, columnRule); err != nil {
			return err
		}
		tmp := routes.TableRef{Schema: "pg_temp", Name: "_weir_drift"}
		if _, err := tx.Exec(ctx, fmt.Sprintf("CREATE TEMP TABLE %s (%s) ON COMMIT DROP", ident(tmp), columnDefs(t.Info))); err != nil {
			return fmt.Errorf("replica %s: source columns: %w", t.Dest, err)
		}
		staged, err := relColumns(ctx, tx, tmp)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DROP TABLE "+ident(tmp)); err != nil {
			return err
		}
		have, err := relColumns(ctx, tx, t.Dest)
		if err != nil {
			return err
		}
		alters, err := driftSQL(t.Dest, staged, have)
		if err != nil {
			return err
		}
		for _, q := range alters {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("evolve replica %s to the source's columns: %s: %w", t.Dest, q, err)
			}
		}
	}
	return nil
}

// driftSQL compares the source's columns (staged) with dest's (have).
func driftSQL(dest routes.TableRef, staged, have []pgColumn) ([]string, error) {
	byName := map[string]pgColumn{}
	for _, c := range have {
		byName[c.name] = c
	}
	var alters []string
	for _, s := range staged {
		d, ok := byName[s.name]
		if !ok {
			if s.notNull {
				return nil, &routes.ProbeError{Table: dest.String(), Column: s.name,
					Problem: "the source has this NOT NULL column and the destination does not",
					Hint:    "add it to the destination (with a default), or run --mode replace"}
			}
			alters = append(alters, fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", ident(dest), quoteIdent(s.name), s.typ))
			continue
		}
		if to, ok := widenType(d.typ, s.typ); ok {
			alters = append(alters, fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s TYPE %s", ident(dest), quoteIdent(s.name), to))
		}
	}
	return alters, nil
}

var (
	numericRE = regexp.MustCompile(`^numeric\((\d+),(\d+)\)$`)
	varcharRE = regexp.MustCompile(`^character varying\((\d+)\)$`)
	intRank   = map[string]int{"smallint": 1, "integer": 2, "bigint": 3}
)

// widenType is the type dest must become to hold every value of src
// exactly, when it cannot now; ok is false when dest holds src (or the two
// are not of one family: the insert casts, or fails loudly).
func widenType(dest, src string) (string, bool) {
	if dest == src {
		return "", false
	}
	if dm, sm := numericRE.FindStringSubmatch(dest), numericRE.FindStringSubmatch(src); dm != nil && (sm != nil || src == "numeric") {
		if sm == nil {
			return "numeric", true // unconstrained source: any scale
		}
		dp, ds := atoi(dm[1]), atoi(dm[2])
		sp, ss := atoi(sm[1]), atoi(sm[2])
		if dp-ds >= sp-ss && ds >= ss {
			return "", false
		}
		scale := max(ds, ss)
		return fmt.Sprintf("numeric(%d,%d)", max(dp-ds, sp-ss)+scale, scale), true
	}
	if dm, sm := varcharRE.FindStringSubmatch(dest), varcharRE.FindStringSubmatch(src); dm != nil && sm != nil {
		if atoi(sm[1]) > atoi(dm[1]) {
			return src, true
		}
		return "", false
	}
	if dr, sr := intRank[dest], intRank[src]; dr > 0 && sr > dr {
		return src, true
	}
	return "", false
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
