package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// Schema drift between runs (append, merge): the staging table's columns
// (this run's probe) against the existing destination's. A widening the
// destination can take — decimal precision or scale, varchar length,
// integer width, a new nullable column — is an ALTER TABLE run before the
// data's transaction: MySQL DDL commits on its own, and a widened column
// holds every value it held before, so a run that fails after it leaves a
// destination that is wider, not different. A new NOT NULL column is
// refused before a row moves, and so is a source type the destination's
// column cannot hold exactly (holdsMyType). Never an implicit cast that
// rounds: MySQL rounds a decimal to the column's scale with only a note,
// and a double into an INT with none, strict mode or not.

type myColumn struct {
	name, typ, collation string // typ: COLUMN_TYPE, e.g. decimal(12,4), varchar(20), int(11) unsigned
	nullable             bool
}

func tableColumns(ctx context.Context, q querier, t routes.TableRef) ([]myColumn, error) {
	rows, err := q.QueryContext(ctx, `SELECT COLUMN_NAME, COLUMN_TYPE, COALESCE(COLLATION_NAME, ''), IS_NULLABLE = 'YES'
FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, t.Schema, t.Name)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", t, err)
	}
	defer rows.Close()
	var out []myColumn
	for rows.Next() {
		var c myColumn
		if err := rows.Scan(&c.name, &c.typ, &c.collation, &c.nullable); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// checkDrift plans, under the lock, what an append or merge into an
// existing destination must change first (run by commitDelta).
func (st *stage) checkDrift(ctx context.Context) error {
	if st.opts.Mode == routes.ModeReplace || !st.e.tableExists(ctx, st.dest) {
		return nil
	}
	staged, err := tableColumns(ctx, st.lock.conn, st.table)
	if err != nil {
		return err
	}
	have, err := tableColumns(ctx, st.lock.conn, st.dest)
	if err != nil {
		return err
	}
	st.drift, st.bounds, err = driftSQL(st.dest, staged, have)
	return err
}

// bound is a destination column whose values checkLengths reads before
// they land: one of a declared length the source's column is not bounded
// by (routes.CheckLength), or a text column in a character set narrower
// than the staged utf8mb4 (narrow).
type bound struct {
	column, typ, src string // typ: the destination's COLUMN_TYPE; src the staged column's
	keep             string // the destination's COLLATE and NULL, which an ALTER must keep
	length           int    // 0: no declared length to check
	bytes            bool   // varbinary(n), TINYTEXT, BLOB, …: a length in bytes
	charset          string // the destination's character set, in which a text's bytes are counted
	narrow           bool   // charset is not utf8mb4: a staged character it has no code for is refused
}

// checkLengths refuses, before the final insert, a staged value longer
// than its destination column's declared length, which MySQL would cut
// with only a note when the excess is spaces, strict mode or not. One
// scan of the staging table over every bound column: CHAR_LENGTH counts
// characters as INSERT … SELECT hands them over (a staged CHAR(m)'s
// trailing spaces are cut on read, so not counted), LENGTH a varbinary's
// or a TINYTEXT's, TEXT's or BLOB's bytes (a text's in the destination's
// character set). MariaDB's INSERT … SELECT keeps only a too-long TEXT's or
// BLOB's length modulo 256 (65536, …), strict mode or not, with no note:
// 260 bytes land as their first 4. A char(n) destination is never
// length-bound: it holds only a char(m ≤ n) (routes.Holds).
//
// The same scan refuses a staged character a narrow destination column
// (latin1, utf8mb3: an emoji, 𝄞, 名 into latin1) has no code for. Strict
// mode fails the INSERT … SELECT on it with the server's raw "Incorrect
// string value" (exit 1, the value in the message); a session that is
// not strict stores '?' (weir's always is: sessionParams). A value is
// representable when converting it to the column's set and back gives
// its bytes again.
func (st *stage) checkLengths(ctx context.Context) error {
	if len(st.bounds) == 0 {
		return nil
	}
	var sel []string
	var dest []any
	longest := make([]int64, len(st.bounds))
	lost := make([]int64, len(st.bounds))
	for i, b := range st.bounds {
		v := "s." + quoteIdent(b.column)
		if b.narrow {
			sel = append(sel, fmt.Sprintf("COALESCE(MAX(BINARY CONVERT(CONVERT(%s USING %s) USING utf8mb4) <> BINARY %s), 0)", v, b.charset, v))
			dest = append(dest, &lost[i])
		}
		if b.length == 0 {
			continue
		}
		f := "CHAR_LENGTH"
		if b.bytes {
			f = "LENGTH"
			if b.charset != "" {
				v = fmt.Sprintf("CONVERT(%s USING %s)", v, b.charset)
			}
		}
		sel = append(sel, fmt.Sprintf("COALESCE(MAX(%s(%s)), 0)", f, v))
		dest = append(dest, &longest[i])
	}
	q := fmt.Sprintf("SELECT %s FROM %s AS s", strings.Join(sel, ", "), ident(st.table))
	if err := st.lock.conn.QueryRowContext(ctx, q).Scan(dest...); err != nil {
		return fmt.Errorf("check the lengths of the values for %s: %w", st.dest, err)
	}
	for i, b := range st.bounds {
		if lost[i] != 0 {
			return charsetError(st.dest, b)
		}
		if n := int(longest[i]); b.length > 0 && n > b.length {
			return routes.TooLongError(st.dest, b.column, b.typ, n, b.bytes, !b.bytes,
				fmt.Sprintf("ALTER TABLE %s MODIFY COLUMN %s %s%s", ident(st.dest), quoteIdent(b.column), lengthened(b.typ, b.length, n), b.keep))
		}
	}
	return nil
}

// charsetError is the refusal of a staged value the destination column's
// character set cannot hold: bad input naming the column and its set,
// never the value, and the ALTER that makes the table utf8mb4.
func charsetError(dest routes.TableRef, b bound) *routes.ProbeError {
	return &routes.ProbeError{Table: dest.String(), Column: b.column,
		Problem: fmt.Sprintf("a source value holds a character the destination's %s CHARACTER SET %s cannot hold (MySQL would refuse it, or store '?' outside strict mode); nothing was written", b.typ, b.charset),
		Hint:    fmt.Sprintf("convert the destination to utf8mb4 first (ALTER TABLE %s CONVERT TO CHARACTER SET utf8mb4), or start it over (--mode replace)", ident(dest))}
}

// lengthened is typ, of declared length length, made to hold n: a
// varchar(n) or varbinary(n) of n, a TINYTEXT or BLOB the next size that
// holds n bytes.
func lengthened(typ string, length, n int) string {
	for _, sized := range [][]string{{"tinytext", "text", "mediumtext", "longtext"}, {"tinyblob", "blob", "mediumblob", "longblob"}} {
		if i := slices.Index(sized, typ); i >= 0 {
			for _, to := range sized[i+1:] {
				if myColumnType(to).Length == 0 || n <= myColumnType(to).Length {
					return to
				}
			}
		}
	}
	return strings.Replace(typ, fmt.Sprintf("(%d)", length), fmt.Sprintf("(%d)", n), 1)
}

// evolveReplica widens a CDC replica to its source's columns as this run
// probed them, before the apply transaction (DDL commits on its own; a
// widening is safe to leave), so a change made after the ALTER on the
// source lands exact: the apply's temp tables take the replica's types.
func evolveReplica(ctx context.Context, conn *sql.Conn, t *cdc.Table) error {
	have, err := tableColumns(ctx, conn, t.Dest)
	if err != nil {
		return err
	}
	key := t.KeyNames()
	var staged []myColumn
	for _, c := range stagedColumns(t.Info, key) {
		staged = append(staged, myColumn{name: c.Name, typ: strings.ToLower(c.ddl), nullable: c.Nullable && !contains(key, c.Name)})
	}
	alters, bounds, err := driftSQL(t.Dest, staged, have)
	if err != nil {
		return err
	}
	for _, b := range bounds { // the replica is weir's: a varchar(n) made text at the source becomes text
		if b.length == 0 || myColumnType(b.src).Kind != myColumnType(b.typ).Kind {
			continue // no declared length (a narrow set only: left to the insert); another kind: left to the insert, as before
		}
		alters = append(alters, fmt.Sprintf("ALTER TABLE %s MODIFY COLUMN %s %s%s", ident(t.Dest), quoteIdent(b.column), b.src, b.keep))
	}
	for _, q := range alters {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("evolve replica %s to the source's columns: %s: %w", t.Dest, q, err)
		}
	}
	return nil
}

// driftSQL compares the source's columns (staged) with dest's (have):
// the ALTER TABLEs to run first, and the columns whose declared length
// the values must be checked against.
func driftSQL(dest routes.TableRef, staged, have []myColumn) ([]string, []bound, error) {
	byName := map[string]myColumn{}
	for _, c := range have {
		byName[strings.ToLower(c.name)] = c
	}
	var alters []string
	var bounds []bound
	for _, s := range staged {
		d, ok := byName[strings.ToLower(s.name)]
		if !ok {
			if !s.nullable {
				return nil, nil, &routes.ProbeError{Table: dest.String(), Column: s.name,
					Problem: "the source has this NOT NULL column and the destination does not",
					Hint:    "add it to the destination (with a default), or run --mode replace"}
			}
			alters = append(alters, fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s%s NULL", ident(dest), quoteIdent(s.name), s.typ, collate(s)))
			continue
		}
		null := " NULL"
		if !d.nullable {
			null = " NOT NULL"
		}
		if to, ok := widenMyType(d.typ, s.typ); ok {
			alters = append(alters, fmt.Sprintf("ALTER TABLE %s MODIFY COLUMN %s %s%s%s", ident(dest), quoteIdent(d.name), to, collate(d), null))
			continue
		}
		if !holdsMyType(d.typ, s.typ) {
			return nil, nil, routes.LossyError(dest, d.name, s.typ, d.typ,
				fmt.Sprintf("ALTER TABLE %s MODIFY COLUMN %s %s%s", ident(dest), quoteIdent(d.name), s.typ, null))
		}
		dt := myColumnType(d.typ)
		charset, _, _ := strings.Cut(d.collation, "_")
		narrow := dt.Kind == routes.KindText && charset != "" && charset != "utf8mb4" // the staged text is utf8mb4
		if n := routes.CheckLength(dt, myColumnType(s.typ)); n > 0 || narrow {
			bounds = append(bounds, bound{column: d.name, typ: d.typ, src: s.typ, keep: collate(d) + null, length: n,
				bytes: dt.Kind == routes.KindBinary || dt.Bytes, charset: charset, narrow: narrow})
		}
	}
	return alters, bounds, nil
}

// casts: MySQL and MariaDB keep 15 digits of a double written into text
// (0.30000000000000004 is stored as 0.3), and a boolean is tinyint(1): a
// number, 0 or 1.
var casts = routes.Casts{BoolNumber: true}

// holdsMyType is routes.Holds over two COLUMN_TYPEs (weir's sessions are
// strict: an integer or decimal out of range fails the statement; a
// too-long string's excess spaces are cut with a note, so its length is
// routes.CheckLength's, checkLengths').
func holdsMyType(dest, src string) bool {
	return routes.Holds(myColumnType(dest), myColumnType(src), casts)
}

// myColumnType maps a COLUMN_TYPE (parseColumnType's) to the type the
// lossy-cast rule compares. tinyint(1) is a boolean, as weir reads it;
// char(n) and binary(n) are fixed-width; types it does not compare (enum, set, geometry, …) are
// routes.KindOther.
func myColumnType(typ string) routes.ColumnType {
	c := parseColumnType(typ)
	_, args, _ := strings.Cut(c.columnType, "(")
	digits, _ := typeArgs(args) // datetime(6), time(3); 0 when none
	switch {
	case c.columnType == "tinyint(1)" || c.dataType == "bool" || c.dataType == "boolean":
		return routes.ColumnType{Kind: routes.KindBool}
	case myIntWidth[c.dataType] > 0:
		return routes.ColumnType{Kind: routes.KindInt, Bits: routes.IntBits(myIntWidth[c.dataType], !strings.Contains(c.columnType, "unsigned"))}
	case c.dataType == "decimal" || c.dataType == "numeric":
		return routes.ColumnType{Kind: routes.KindDecimal, Precision: int(c.precision), Scale: int(c.scale)}
	case (c.dataType == "double" || c.dataType == "float" || c.dataType == "real") && strings.Contains(args, ","):
		// DOUBLE(M,D), FLOAT(M,D) round each value to D decimals without an
		// error (1.2345 is stored as 1.23): held as a decimal(M,D) is.
		p, s := typeArgs(args)
		return routes.ColumnType{Kind: routes.KindDecimal, Precision: int(p), Scale: int(s)}
	case c.dataType == "bit": // an unsigned integer of n bits (text into it is stored as its bytes: '5' as 53)
		return routes.ColumnType{Kind: routes.KindInt, Bits: int(c.precision)}
	case c.dataType == "year": // held as a date: an integer into it is refused (5 is stored as 2005), a date fails loudly
		return routes.ColumnType{Kind: routes.KindDate}
	case c.dataType == "datetime", c.dataType == "time":
		return routes.ColumnType{Kind: map[string]routes.TypeKind{"datetime": routes.KindTimestamp, "time": routes.KindTime}[c.dataType], Digits: int(digits)}
	case c.dataType == "timestamp": // kept as UTC instants, shown in the session's zone
		return routes.ColumnType{Kind: routes.KindTimestamp, Digits: int(digits), Zone: "UTC"}
	case c.dataType == "char": // pads with spaces, cut on read with the value's own: 'a  ' reads back as 'a'
		return routes.ColumnType{Kind: routes.KindText, Width: int(max(digits, 1)), Trimmed: true, Length: int(max(digits, 1))}
	case c.dataType == "binary": // pads with NUL bytes, kept on read
		return routes.ColumnType{Kind: routes.KindBinary, Width: int(max(digits, 1)), Length: int(max(digits, 1))}
	case c.dataType == "varchar":
		return routes.ColumnType{Kind: routes.KindText, Length: int(digits)}
	case c.dataType == "varbinary":
		return routes.ColumnType{Kind: routes.KindBinary, Length: int(digits)}
	case myTextBytes[c.dataType] > 0: // a length in bytes (longtext's and longblob's, 4 GiB, are not checked)
		return routes.ColumnType{Kind: myKindTypes[simpleKinds[c.dataType]].Kind, Length: myTextBytes[c.dataType], Bytes: true}
	}
	if k, ok := simpleKinds[c.dataType]; ok && c.dataType != "enum" && c.dataType != "set" {
		return myKindTypes[k]
	}
	return routes.ColumnType{}
}

var (
	myTextBytes = map[string]int{"tinytext": 255, "text": 65535, "mediumtext": 16777215, "tinyblob": 255, "blob": 65535, "mediumblob": 16777215}
	myIntWidth  = map[string]int{"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}
	myKindTypes = map[kind]routes.ColumnType{
		kindFloat32: {Kind: routes.KindFloat, Bits: 32}, kindFloat64: {Kind: routes.KindFloat, Bits: 64},
		kindDate: {Kind: routes.KindDate}, kindString: {Kind: routes.KindText}, kindBinary: {Kind: routes.KindBinary},
	}
)

func collate(c myColumn) string {
	if c.collation == "" {
		return ""
	}
	return " COLLATE " + c.collation
}

var (
	myDecimalRE = regexp.MustCompile(`^decimal\((\d+),(\d+)\)( unsigned)?$`)
	myVarcharRE = regexp.MustCompile(`^(varchar|varbinary|char)\((\d+)\)$`) // not binary(n): a wider one pads
	myIntRE     = regexp.MustCompile(`^(tinyint|smallint|mediumint|int|bigint)(\(\d+\))?( unsigned)?$`)
	myIntRank   = map[string]int{"tinyint": 1, "smallint": 2, "mediumint": 3, "int": 4, "bigint": 5}
)

// widenMyType is the type dest must become to hold every value of src
// exactly, when it cannot now; ok is false when it can (or the two are not
// of one family).
func widenMyType(dest, src string) (string, bool) {
	if dest == src {
		return "", false
	}
	if dm, sm := myDecimalRE.FindStringSubmatch(dest), myDecimalRE.FindStringSubmatch(src); dm != nil && sm != nil && dm[3] == sm[3] {
		dp, ds, sp, ss := atoi(dm[1]), atoi(dm[2]), atoi(sm[1]), atoi(sm[2])
		if dp-ds >= sp-ss && ds >= ss {
			return "", false
		}
		scale := max(ds, ss)
		return fmt.Sprintf("decimal(%d,%d)%s", max(dp-ds, sp-ss)+scale, scale, dm[3]), true
	}
	if dm, sm := myVarcharRE.FindStringSubmatch(dest), myVarcharRE.FindStringSubmatch(src); dm != nil && sm != nil && dm[1] == sm[1] {
		return src, atoi(sm[2]) > atoi(dm[2])
	}
	if dm, sm := myIntRE.FindStringSubmatch(dest), myIntRE.FindStringSubmatch(src); dm != nil && sm != nil && dm[3] == sm[3] && dest != "tinyint(1)" {
		// tinyint(1) is a boolean (weir reads it as one): never made an integer
		return sm[1] + sm[3], myIntRank[sm[1]] > myIntRank[dm[1]]
	}
	return "", false
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
