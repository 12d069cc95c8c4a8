package postgres

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

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
		staged, err := sourceColumns(ctx, tx, t.Info)
		if err != nil {
			return fmt.Errorf("replica %s: %w", t.Dest, err)
		}
		have, err := relColumns(ctx, tx, t.Dest)
		if err != nil {
			return err
		}
		if err := checkFamilies(t, "replica", staged, have); err != nil {
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

// sourceColumns are info's columns as PostgreSQL types them (format_type),
// read back from a temp table created with them inside tx.
func sourceColumns(ctx context.Context, tx pgx.Tx, info *routes.TableInfo) ([]pgColumn, error) {
	tmp := routes.TableRef{Schema: "pg_temp", Name: "_weir_drift"}
	if _, err := tx.Exec(ctx, fmt.Sprintf("CREATE TEMP TABLE %s (%s) ON COMMIT DROP", ident(tmp), columnDefs(info))); err != nil {
		return nil, fmt.Errorf("source columns: %w", err)
	}
	staged, err := relColumns(ctx, tx, tmp)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, "DROP TABLE "+ident(tmp)); err != nil {
		return nil, err
	}
	return staged, nil
}

// checkFamilies refuses a CDC table whose source column now has a type of
// another family than the one the replica or log was created with (a
// time read as a duration after ?time=duration was added, an integer
// column altered to text): the apply would cast each value or fail on
// the server's error. The pair is bootstrapped again with the new type.
func checkFamilies(t *cdc.Table, what string, staged, have []pgColumn) error {
	byName := map[string]string{}
	for _, c := range have {
		byName[c.name] = c.typ
	}
	for _, s := range staged {
		d, ok := byName[s.name]
		if !ok {
			continue
		}
		sf, df := typeFamily(s.typ), typeFamily(d)
		if sf != "" && df != "" && sf != df {
			return &routes.ProbeError{Table: t.Source.String(), Column: s.name,
				Problem: fmt.Sprintf("the source's column now reads as %s, and the %s %s holds %s since its bootstrap", s.typ, what, t.Dest, d),
				Hint:    "run weir reset for this pair to bootstrap it again with the new type, or undo the change at the source (its type, or a URL option such as time=)"}
		}
	}
	return nil
}

// typeFamily groups format_type's names by the values they hold; "" for a
// type not grouped here (no check).
func typeFamily(typ string) string {
	switch {
	case strings.HasSuffix(typ, "[]"):
		return ""
	case typ == "smallint", typ == "integer", typ == "bigint", typ == "real", typ == "double precision", strings.HasPrefix(typ, "numeric"):
		return "number"
	case typ == "text", strings.HasPrefix(typ, "character"):
		return "text"
	case strings.HasPrefix(typ, "time"): // time, timestamp, each with or without time zone
		family, _, _ := strings.Cut(typ, "(")
		family, _, _ = strings.Cut(family, " ")
		if strings.HasSuffix(typ, " with time zone") {
			family += "tz"
		}
		return family
	case strings.HasPrefix(typ, "interval"):
		return "interval"
	case typ == "date", typ == "boolean", typ == "bytea", typ == "uuid":
		return typ
	case typ == "json", typ == "jsonb":
		return "json"
	}
	return ""
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
		} else if !holds(d.typ, s.typ) {
			return nil, &routes.ProbeError{Table: dest.String(), Column: s.name,
				Problem: fmt.Sprintf("the source's column is now %s and the destination's is %s, which would round or cut its values", s.typ, d.typ),
				Hint: fmt.Sprintf("change the destination first (ALTER TABLE %s ALTER COLUMN %s TYPE %s), or start it over (--mode replace; weir reset for log_based)",
					ident(dest), quoteIdent(s.name), s.typ)}
		}
	}
	return alters, nil
}

// holds reports whether a dest column stores every value of type src
// exactly, or fails loudly on one it cannot (an integer too large for a
// numeric(p,s), a string longer than a varchar(n)). It is asked after
// widenType, so widenings are already planned. An assignment cast that
// rounds (1.5 into an integer, a double into a numeric, microseconds into
// timestamp(3)) or changes a value's meaning (timestamp into timestamptz)
// does not hold. Types typeFamily does not group are left to the insert.
func holds(dest, src string) bool {
	df, sf := typeFamily(dest), typeFamily(src)
	switch {
	case dest == src, df == "" || sf == "":
		return true
	case dest == "text" || dest == "character varying":
		return true // every value has an exact text form
	case df == "number" && sf == "number":
		return numberHolds(dest, src)
	case df != sf:
		return sf == "date" && df == "timestamp" // midnight, exact
	case df == "time" || df == "timetz" || df == "timestamp" || df == "timestamptz":
		return timePrecision(dest) >= timePrecision(src)
	case df == "interval":
		return dest == "interval" // interval(p) or fields drop parts of a value
	}
	return true // one family: text (a narrower one fails loudly), json, bool, bytea, uuid
}

// numberHolds is holds for two numeric types.
func numberHolds(dest, src string) bool {
	switch {
	case intRank[src] > 0:
		switch dest {
		case "real":
			return src == "smallint"
		case "double precision":
			return src != "bigint" // 2^53 + 1 has no double
		}
		return true // a wider integer, or a numeric that fails loudly on overflow
	case src == "real":
		return dest == "double precision"
	case src == "double precision":
		return false // a double's digits are not a numeric's (0.1 + 0.2 → 0.3) nor an integer's
	}
	// src is numeric or numeric(p,s)
	m := numericRE.FindStringSubmatch(src)
	switch {
	case intRank[dest] > 0:
		return m != nil && m[2] == "0"
	case dest == "real":
		return m != nil && atoi(m[1]) <= 6
	case dest == "double precision":
		return m != nil && atoi(m[1]) <= 15 // DBL_DIG: every 15-digit decimal round trips
	}
	return true // numeric into numeric: widenType widened what it must
}

var timeRE = regexp.MustCompile(`^(?:timestamp|time)(?:\((\d)\))? with(?:out)? time zone$`)

// timePrecision is a time or timestamp type's fractional digits (6 when
// format_type names none).
func timePrecision(typ string) int {
	if m := timeRE.FindStringSubmatch(typ); m != nil && m[1] != "" {
		return atoi(m[1])
	}
	return 6
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
	if f := typeFamily(dest); (f == "timestamp" || f == "timestamptz" || f == "time" || f == "timetz") && f == typeFamily(src) && timePrecision(src) > timePrecision(dest) {
		return src, true // more fractional digits
	}
	return "", false
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
