package cdc

import (
	"context"
	"strings"

	"github.com/weirhq/weir/routes"
)

// CurrentViewSQL is the CREATE statement of a changelog's <table>__current
// view: per key, the latest op at or after the last barrier (a TRUNCATE,
// or a baseline: rows before it are gone), unless that op is a delete.
// quote renders one identifier in the destination's dialect; the rest is
// SQL both postgres and mysql/mariadb accept.
func CurrentViewSQL(t *Table, fits routes.Limit, quote func(string) string) string {
	view := CurrentView(t.Dest, fits)
	return "CREATE OR REPLACE VIEW " + refSQL(view, quote) + " AS\n" + CurrentSQL(t, quote, refSQL(t.Dest, quote))
}

func refSQL(r routes.TableRef, quote func(string) string) string {
	if r.Schema == "" {
		return quote(r.Name)
	}
	return quote(r.Schema) + "." + quote(r.Name)
}

// CurrentSQL is the query of the __current view over log, a relation
// holding t's changelog: what a destination without views (Iceberg) runs
// instead, e.g. in a DuckDB model with the log as its input. The SQL is
// PostgreSQL's, MySQL's and DuckDB's alike.
func CurrentSQL(t *Table, quote func(string) string, log string) string {
	list := func(alias string, cols []string) string {
		q := make([]string, len(cols))
		for i, c := range cols {
			q[i] = alias + quote(c)
		}
		return strings.Join(q, ", ")
	}
	return strings.NewReplacer(
		"$log", log, "$cols", list("", t.Columns),
		"$lcols", list("l.", t.Columns), "$lkeys", list("l.", t.KeyNames()),
		"$op", quote(ColOp), "$lsn", quote(ColLSN), "$ord", quote(ColOrd),
	).Replace(`SELECT $cols FROM (
  SELECT $lcols, l.$op, ROW_NUMBER() OVER (PARTITION BY $lkeys ORDER BY l.$lsn DESC, l.$ord DESC) AS _weir_rn
  FROM $log l LEFT JOIN (
    SELECT $lsn AS _weir_b_lsn, $ord AS _weir_b_ord FROM $log WHERE $op IN ('T', 'B') ORDER BY $lsn DESC, $ord DESC LIMIT 1
  ) b ON TRUE
  WHERE l.$op IN ('I', 'U', 'D', 'B') AND (b._weir_b_lsn IS NULL OR (l.$lsn, l.$ord) >= (b._weir_b_lsn, b._weir_b_ord))
) x WHERE _weir_rn = 1 AND $op <> 'D'`)
}

// ApplyWhole applies one small window and saves states in one transaction
// that begin opens (an Applier's ApplyWindow): the window's tables are
// created if missing, and the state tables of states' destinations.
func ApplyWhole(ctx context.Context, w *Window, states map[routes.TableRef]routes.State,
	begin func(ctx context.Context, tables []*Table, dests []routes.TableRef) (Tx, error)) error {
	var tables []*Table
	for _, tw := range w.Sorted() {
		tables = append(tables, tw.Table)
	}
	var dests []routes.TableRef
	for d := range states {
		dests = append(dests, d)
	}
	x, err := begin(ctx, tables, dests)
	if err != nil {
		return err
	}
	defer x.Rollback()
	return Finish(ctx, x, w, states)
}
