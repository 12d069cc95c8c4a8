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
	// base is a domain's type, format_type's (a domain over a domain: the
	// innermost), "" when typ is no domain: its values are cast, rounded
	// and cut as the base type's are.
	base string
}

// rule is the type the lossy-cast and length rules compare: a domain's
// base type, else the column's.
func (c pgColumn) rule() string {
	if c.base != "" {
		return c.base
	}
	return c.typ
}

func relColumns(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, t routes.TableRef) ([]pgColumn, error) {
	rows, err := q.Query(ctx, `WITH RECURSIVE dom(attnum, typ, mod, depth) AS (
  SELECT a.attnum, t.typbasetype, t.typtypmod, 1 FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
  WHERE a.attrelid = $1::regclass AND t.typtype = 'd'
  UNION ALL
  SELECT d.attnum, t.typbasetype, t.typtypmod, d.depth + 1 FROM dom d JOIN pg_type t ON t.oid = d.typ
  WHERE t.typtype = 'd' AND d.depth < 32)
SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
  COALESCE((SELECT format_type(d.typ, d.mod) FROM dom d WHERE d.attnum = a.attnum ORDER BY d.depth DESC LIMIT 1), '')
FROM pg_attribute a
WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, ident(t))
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", t, err)
	}
	var out []pgColumn
	var c pgColumn
	_, err = pgx.ForEachRow(rows, []any{&c.name, &c.typ, &c.notNull, &c.base}, func() error {
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
	return st.planDrift(ctx)
}

// planDrift plans the ALTER TABLE statements that let dest hold what the
// staging table holds and the columns whose length the commit checks, or
// returns bad input naming the column when it cannot.
func (st *stage) planDrift(ctx context.Context) error {
	staged, err := relColumns(ctx, st.lock.conn, st.table)
	if err != nil {
		return err
	}
	have, err := relColumns(ctx, st.lock.conn, st.dest)
	if err != nil {
		return err
	}
	st.drift, st.bounds, err = driftSQL(st.dest, staged, have)
	return err
}

// bound is a destination column of a declared length the source's
// column is not bounded by (routes.CheckLength): checkLengths reads the
// staged values' lengths before they land.
type bound struct {
	column, typ, src string // typ: the destination's, format_type's; src the staged column's
	length           int
	array            bool // the length is each element's (a varchar(n)[])
	bytes            bool // "char", name: a length in bytes (the database's encoding)
}

// checkLengths refuses, before the final insert, a staged value longer
// than its destination column's declared length, which PostgreSQL would
// cut without an error when the excess is spaces. One scan of the staging
// table over every bound column; characters are counted as the
// assignment cast sees the value: its text (a char(n)'s trailing spaces
// are not part of it, and its cast to varchar drops them).
func (st *stage) checkLengths(ctx context.Context, tx pgx.Tx) error {
	if len(st.bounds) == 0 {
		return nil
	}
	sel := make([]string, len(st.bounds))
	for i, b := range st.bounds {
		f := "char_length"
		if b.bytes {
			f = "octet_length"
		}
		v := fmt.Sprintf("%s(%s::text)", f, quoteIdent(b.column))
		if b.array { // the longest element (unnest flattens every dimension)
			v = fmt.Sprintf("(SELECT max(%s(e::text)) FROM unnest(%s) e)", f, quoteIdent(b.column))
		}
		sel[i] = fmt.Sprintf("COALESCE(max(%s), 0)", v)
	}
	var longest []int64
	q := fmt.Sprintf("SELECT ARRAY[%s]::bigint[] FROM %s", strings.Join(sel, ", "), ident(st.table))
	if err := tx.QueryRow(ctx, q).Scan(&longest); err != nil {
		return fmt.Errorf("check the lengths of the values for %s: %w", st.dest, err)
	}
	for i, b := range st.bounds {
		if n := int(longest[i]); n > b.length {
			to := strings.Replace(b.typ, fmt.Sprintf("(%d)", b.length), fmt.Sprintf("(%d)", n), 1)
			if to == b.typ { // "char", name: no length to lengthen
				to = "text"
			}
			return routes.TooLongError(st.dest, b.column, b.typ, n, b.bytes, true,
				fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s TYPE %s", ident(st.dest), quoteIdent(b.column), to))
		}
	}
	return nil
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
		alters, bounds, err := driftSQL(t.Dest, staged, have)
		if err != nil {
			return err
		}
		for _, b := range bounds { // the replica is weir's: a varchar(n) made text at the source becomes text
			alters = append(alters, fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s TYPE %s", ident(t.Dest), quoteIdent(b.column), b.src))
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

// typeFamily groups format_type's names by the values they hold (their
// routes.TypeKind, a timestamp's or time's zone apart); "" for a type not
// grouped (no check).
func typeFamily(typ string) string {
	ct := pgColumnType(typ)
	switch ct.Kind {
	case routes.KindInt, routes.KindFloat, routes.KindDecimal:
		return "number"
	case routes.KindTime, routes.KindTimestamp:
		family := map[routes.TypeKind]string{routes.KindTime: "time", routes.KindTimestamp: "timestamp"}[ct.Kind]
		if ct.Zone != "" {
			family += "tz"
		}
		return family
	}
	return map[routes.TypeKind]string{routes.KindText: "text", routes.KindInterval: "interval", routes.KindDate: "date",
		routes.KindBool: "boolean", routes.KindBinary: "bytea", routes.KindUUID: "uuid", routes.KindJSON: "json"}[ct.Kind]
}

// casts: PostgreSQL writes a float into text as its shortest exact digits
// (float8out), and has no assignment cast from boolean to a number.
var casts = routes.Casts{FloatText: true}

// pgColumnType maps a format_type name (parsePGType's) to the type the
// lossy-cast rule compares; arrays and types it does not know are
// routes.KindOther.
func pgColumnType(typ string) routes.ColumnType {
	spec := parsePGType(typ)
	digits := 6 // format_type names no precision: microseconds
	if len(spec.mods) == 1 {
		digits = spec.mods[0]
	}
	switch {
	case spec.array:
		return routes.ColumnType{}
	case spec.kind == kindNumeric:
		if len(spec.mods) == 0 {
			return routes.ColumnType{Kind: routes.KindDecimal} // any precision and scale
		}
		ct := routes.ColumnType{Kind: routes.KindDecimal, Precision: spec.mods[0]}
		if len(spec.mods) > 1 {
			ct.Scale = spec.mods[1]
		}
		return ct
	case spec.kind == kindTime, spec.kind == kindTimestamp:
		return routes.ColumnType{Kind: pgKindTypes[spec.kind].Kind, Digits: digits}
	case spec.kind == kindTimestamptz:
		return routes.ColumnType{Kind: routes.KindTimestamp, Digits: digits, Zone: "UTC"}
	case spec.kind == kindInterval:
		base, _, _ := strings.Cut(strings.ToLower(typ), "(")
		return routes.ColumnType{Kind: routes.KindInterval, Digits: digits, Fields: strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(base), "interval"))}
	case spec.kind == kindBpchar && len(spec.mods) == 1:
		// character(n) pads to n and drops trailing spaces when read: a
		// fixed width, trimmed like MySQL's char(n)
		return routes.ColumnType{Kind: routes.KindText, Width: spec.mods[0], Trimmed: true, Length: spec.mods[0]}
	case typ == "money": // two decimals (lc_monetary's, as C's): 1.2345 is stored as $1.23
		return routes.ColumnType{Kind: routes.KindDecimal, Precision: 19, Scale: 2}
	case spec.kind == kindVarchar && len(spec.mods) == 1:
		return routes.ColumnType{Kind: routes.KindText, Length: spec.mods[0]}
	case spec.kind == kindUnknown && (typ == "timetz" || strings.HasPrefix(typ, "time") && !strings.HasPrefix(typ, "timestamp") && strings.HasSuffix(typ, " with time zone")):
		return routes.ColumnType{Kind: routes.KindTime, Digits: digits, Zone: "UTC"}
	}
	return pgKindTypes[spec.kind]
}

// pgKindTypes are the column types of the kinds that take no typmod.
var pgKindTypes = map[pgKind]routes.ColumnType{
	kindBool: {Kind: routes.KindBool}, kindInt2: {Kind: routes.KindInt, Bits: 15}, kindInt4: {Kind: routes.KindInt, Bits: 31},
	kindInt8: {Kind: routes.KindInt, Bits: 63}, kindOID: {Kind: routes.KindInt, Bits: 32},
	kindFloat4: {Kind: routes.KindFloat, Bits: 32}, kindFloat8: {Kind: routes.KindFloat, Bits: 64},
	kindText: {Kind: routes.KindText}, kindVarchar: {Kind: routes.KindText}, kindBpchar: {Kind: routes.KindText},
	// "char" keeps a text's first byte, name its first 63 (NAMEDATALEN-1),
	// without an error: a length in bytes (CheckLength)
	kindChar: {Kind: routes.KindText, Length: 1, Bytes: true}, kindName: {Kind: routes.KindText, Length: 63, Bytes: true},
	kindJSON: {Kind: routes.KindJSON}, kindJSONB: {Kind: routes.KindJSON}, kindBytea: {Kind: routes.KindBinary},
	kindDate: {Kind: routes.KindDate}, kindTime: {Kind: routes.KindTime}, kindTimestamp: {Kind: routes.KindTimestamp},
	kindUUID: {Kind: routes.KindUUID},
}

// driftSQL compares the source's columns (staged) with dest's (have):
// the ALTER TABLEs to run first, and the columns whose declared length
// the values must be checked against.
func driftSQL(dest routes.TableRef, staged, have []pgColumn) ([]string, []bound, error) {
	byName := map[string]pgColumn{}
	for _, c := range have {
		byName[c.name] = c
	}
	var alters []string
	var bounds []bound
	for _, s := range staged {
		d, ok := byName[s.name]
		if !ok {
			if s.notNull {
				return nil, nil, &routes.ProbeError{Table: dest.String(), Column: s.name,
					Problem: "the source has this NOT NULL column and the destination does not",
					Hint:    "add it to the destination (with a default), or run --mode replace"}
			}
			alters = append(alters, fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", ident(dest), quoteIdent(s.name), s.typ))
			continue
		}
		if to, ok := widenType(d.typ, s.typ); ok {
			alters = append(alters, fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s TYPE %s", ident(dest), quoteIdent(s.name), to))
		} else if !holds(d.rule(), s.rule()) {
			return nil, nil, routes.LossyError(dest, s.name, s.typ, d.typ,
				fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s TYPE %s", ident(dest), quoteIdent(s.name), s.typ))
		} else {
			de, se, array := elements(d.rule(), s.rule())
			if n := routes.CheckLength(pgColumnType(de), pgColumnType(se)); n > 0 {
				// typ: the base type a domain's message and ALTER name
				bounds = append(bounds, bound{column: s.name, typ: d.rule(), src: s.typ, length: n, array: array, bytes: pgColumnType(de).Bytes})
			}
		}
	}
	return alters, bounds, nil
}

// holds is routes.Holds over two format_type names, asked after
// widenType, so widenings are already planned.
// Two arrays are held element by element: an element's assignment cast
// rounds as a column's does ({1.5} into integer[] is {2}).
func holds(dest, src string) bool {
	dest, src, _ = elements(dest, src)
	return routes.Holds(pgColumnType(dest), pgColumnType(src), casts)
}

// elements is the element types of two arrays (array true), else the
// types themselves: an array's elements are cast, rounded and cut as a
// column of their type is ('xyz  ' into a varchar(3)[] is {xyz}).
func elements(dest, src string) (string, string, bool) {
	if d, s := strings.TrimSuffix(dest, "[]"), strings.TrimSuffix(src, "[]"); d != dest && s != src {
		return d, s, true
	}
	return dest, src, false
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
	if d, s := pgColumnType(dest), pgColumnType(src); (d.Kind == routes.KindTime || d.Kind == routes.KindTimestamp) && typeFamily(dest) == typeFamily(src) && s.Digits > d.Digits {
		return src, true // more fractional digits
	}
	return "", false
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
