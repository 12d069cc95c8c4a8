package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
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
	st.drift, err = driftSQL(st.dest, staged, have)
	return err
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
	alters, err := driftSQL(t.Dest, staged, have)
	if err != nil {
		return err
	}
	for _, q := range alters {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("evolve replica %s to the source's columns: %s: %w", t.Dest, q, err)
		}
	}
	return nil
}

// driftSQL compares the source's columns (staged) with dest's (have).
func driftSQL(dest routes.TableRef, staged, have []myColumn) ([]string, error) {
	byName := map[string]myColumn{}
	for _, c := range have {
		byName[strings.ToLower(c.name)] = c
	}
	var alters []string
	for _, s := range staged {
		d, ok := byName[strings.ToLower(s.name)]
		if !ok {
			if !s.nullable {
				return nil, &routes.ProbeError{Table: dest.String(), Column: s.name,
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
			return nil, &routes.ProbeError{Table: dest.String(), Column: d.name,
				Problem: fmt.Sprintf("the source's column is now %s and the destination's is %s, which does not hold every value exactly: MySQL would round or cut them without an error", s.typ, d.typ),
				Hint:    fmt.Sprintf("ALTER TABLE %s MODIFY COLUMN %s %s%s, or run --mode replace", ident(dest), quoteIdent(d.name), s.typ, null)}
		}
	}
	return alters, nil
}

// myType is a COLUMN_TYPE as holdsMyType compares it: its family, and
// for numbers and times the size (integer bits, decimal precision and
// scale, fractional second digits).
type myType struct {
	family    string // int, bool, decimal, float, double, date, datetime, timestamp, time, text, binary; "" not compared
	bits      int    // int: bits of magnitude a value needs (31 for a signed int, 32 unsigned)
	prec, fsp int    // decimal: precision, scale; datetime, timestamp, time: fractional digits
}

var (
	myIntBits  = map[string]int{"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}
	myFspRE    = regexp.MustCompile(`^(datetime|timestamp|time)(?:\((\d)\))?$`)
	myTextRE   = regexp.MustCompile(`^(char|varchar|tinytext|text|mediumtext|longtext)\b`)
	myBinaryRE = regexp.MustCompile(`^(binary|varbinary|tinyblob|blob|mediumblob|longblob)\b`)
)

func parseMyType(typ string) myType {
	typ = strings.TrimSpace(strings.ToLower(typ))
	switch {
	case typ == "tinyint(1)" || typ == "bool" || typ == "boolean":
		return myType{family: "bool"}
	case myIntRE.MatchString(typ):
		m := myIntRE.FindStringSubmatch(typ)
		bits := myIntBits[m[1]]
		if m[3] == "" {
			bits--
		}
		return myType{family: "int", bits: bits}
	case myDecimalRE.MatchString(typ):
		m := myDecimalRE.FindStringSubmatch(typ)
		return myType{family: "decimal", prec: atoi(m[1]), fsp: atoi(m[2])}
	case strings.HasPrefix(typ, "float"):
		return myType{family: "float"}
	case strings.HasPrefix(typ, "double"):
		return myType{family: "double"}
	case typ == "date":
		return myType{family: "date"}
	case myFspRE.MatchString(typ):
		m := myFspRE.FindStringSubmatch(typ)
		return myType{family: m[1], fsp: atoi(m[2])}
	case myTextRE.MatchString(typ):
		return myType{family: "text"}
	case myBinaryRE.MatchString(typ):
		return myType{family: "binary"}
	}
	return myType{}
}

// holdsMyType reports whether a column of type dest takes every value of
// a source column of type src exactly or refuses it with an error
// (weir's sessions are strict: a too-long string, an integer or decimal
// out of range fail the statement; an integer, decimal or time is text
// as it is written). MySQL rounds without an error a
// double or a decimal of more scale into an integer or a decimal, a
// bigint into a double, a double into a float, a datetime into a date or
// fewer fractional digits, a double into text (0.30000000000000004 is
// stored as 0.3), and reads a number into tinyint(1) as a boolean: those
// are false. Types not compared here (json, enum, bit, year, …) are left
// to the insert.
func holdsMyType(dest, src string) bool {
	d, s := parseMyType(dest), parseMyType(src)
	if d.family == "" || s.family == "" {
		return d.family != "bool" && !(d.family == "text" && (s.family == "float" || s.family == "double"))
	}
	switch d.family {
	case "bool":
		return s.family == "bool"
	case "int":
		return s.family == "bool" || s.family == "int" || s.family == "decimal" && s.fsp == 0
	case "decimal":
		return s.family == "bool" || s.family == "int" || s.family == "decimal" && s.fsp <= d.fsp
	case "double":
		return s.family == "bool" || s.family == "double" || s.family == "float" || s.family == "int" && s.bits <= 32
	case "float":
		return s.family == "bool" || s.family == "float" || s.family == "int" && s.bits <= 24
	case "date":
		return s.family == "date"
	case "datetime", "timestamp":
		return s.family == "date" || s.family == d.family && s.fsp <= d.fsp
	case "time":
		return s.family == "time" && s.fsp <= d.fsp
	case "text":
		return s.family != "float" && s.family != "double"
	case "binary":
		return s.family == "binary" || s.family == "text"
	}
	return true
}

func collate(c myColumn) string {
	if c.collation == "" {
		return ""
	}
	return " COLLATE " + c.collation
}

var (
	myDecimalRE = regexp.MustCompile(`^decimal\((\d+),(\d+)\)( unsigned)?$`)
	myVarcharRE = regexp.MustCompile(`^(varchar|varbinary)\((\d+)\)$`)
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
