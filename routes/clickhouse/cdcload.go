package clickhouse

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// A CDC chunk reaches ClickHouse in two steps. Its rows are first loaded
// as text into an input table (every column Nullable(String), engine
// Memory, one per destination table and emptied per chunk) with the
// route's native insert encoders; then one INSERT … SELECT casts each
// value to its column's type, fills Unchanged columns from the key's
// latest version, and writes the run's staging table. Text because the
// change values are the source's text (pgoutput) or loosely typed Go
// values (binlog): ClickHouse parses them the way it parses its own input,
// and a value it cannot parse fails the chunk (checkCasts), where CAST
// alone would turn it into NULL.
const inputPrefix = "_weir_cdcin_"

// inputRow is one row of an input table: the values (aligned with the
// table's columns; nil is NULL), the origin key, the indexes of the
// Unchanged columns and the extra columns (changelog: op, lsn, ord, ts;
// replica: the deleted flag).
type inputRow struct {
	vals, origin []any
	unchanged    string
	extra        []string
}

// inputNames are the input table's columns: _weir_v_<i> per value,
// _weir_o_<i> per key column (the origin), _weir_unchanged, then extra.
func inputNames(t *cdc.Table, extra []string) []string {
	var names []string
	for i := range t.Columns {
		names = append(names, fmt.Sprintf("_weir_v_%d", i))
	}
	for i := range t.Key {
		names = append(names, fmt.Sprintf("_weir_o_%d", i))
	}
	names = append(names, "_weir_unchanged")
	return append(names, extra...)
}

// createInput creates a run's input table, _weir_cdcin_<table>_<run>: a
// table already of that name is not this run's (the user's) and is
// refused, never dropped. A dead run's is dropped with its other
// leftovers, by its run id (stage.dropLeftovers).
func (e *Endpoint) createInput(ctx context.Context, in routes.TableRef, names []string) error {
	defs := make([]string, len(names))
	for i, n := range names {
		defs[i] = quoteIdent(n) + " Nullable(String)"
	}
	err := e.conn.exec(ctx, fmt.Sprintf("CREATE TABLE %s (%s) ENGINE = Memory", ident(in), strings.Join(defs, ", ")))
	if errorCode(err) == codeTableAlreadyExists {
		return routes.Occupied(in, "the input table of a log_based run")
	}
	return err
}

// loadInput empties the input table and loads rows into it, as one Arrow
// batch of strings through the native insert encoders. types are the
// destination's column types (aligned with the values), which decide how
// times are rendered.
func (e *Endpoint) loadInput(ctx context.Context, in routes.TableRef, names []string, types []string, keyTypes []string, rows []inputRow) error {
	if err := e.conn.exec(ctx, "TRUNCATE TABLE "+ident(in)); err != nil {
		return err
	}
	fields := make([]arrow.Field, len(names))
	encs := make([]encoder, len(names))
	for i, n := range names {
		fields[i] = arrow.Field{Name: n, Type: arrow.BinaryTypes.String, Nullable: true}
		enc, err := newEncoder(arrow.BinaryTypes.String, "Nullable(String)", e.opts)
		if err != nil {
			return err
		}
		encs[i] = enc
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for _, r := range rows {
		if err := e.appendInput(b, r, types, keyTypes); err != nil {
			return err
		}
	}
	rec := b.NewRecordBatch()
	sent := false
	_, err := e.conn.insert(ctx, ident(in), names, encs, func() (arrow.RecordBatch, error) {
		if sent {
			return nil, io.EOF
		}
		sent = true
		return rec, nil
	})
	return err
}

func (e *Endpoint) appendInput(b *array.RecordBuilder, r inputRow, types, keyTypes []string) error {
	col := 0
	put := func(v any, typ string) error {
		s, null, err := cellText(v, typ, e.opts)
		if err != nil {
			return err
		}
		sb := b.Field(col).(*array.StringBuilder)
		col++
		if null {
			sb.AppendNull()
		} else {
			sb.Append(s)
		}
		return nil
	}
	for i := range types {
		var v any
		if r.vals != nil {
			v = r.vals[i]
		}
		if err := put(v, types[i]); err != nil {
			return err
		}
	}
	for i := range keyTypes {
		var v any
		if r.origin != nil {
			v = r.origin[i]
		}
		if err := put(v, keyTypes[i]); err != nil {
			return err
		}
	}
	if err := put(r.unchanged, "String"); err != nil {
		return err
	}
	for _, x := range r.extra {
		if err := put(x, "String"); err != nil {
			return err
		}
	}
	return nil
}

// unchangedList names the Unchanged columns of a row ("1,3"); they are
// loaded as NULL and filled by the INSERT … SELECT.
func unchangedList(row []any) string {
	var idx []string
	for i, v := range row {
		if cdc.IsUnchanged(v) {
			idx = append(idx, strconv.Itoa(i))
		}
	}
	return strings.Join(idx, ",")
}

// cellText renders one change value as the text ClickHouse parses into
// column type typ; null reports NULL (also for Unchanged, filled later).
// Times go in UTC at the column's precision: DateTime holds whole seconds,
// and a fraction is an error unless subseconds=truncate, as for the bulk
// route.
func cellText(v any, typ string, o Options) (s string, null bool, err error) {
	inner := typ
	if t, perr := parseType(typ); perr == nil && t.Name == "Nullable" {
		inner = t.Elem.raw
	}
	if bits, ok, err := floatBits(v, inner); ok {
		return bits, false, err
	}
	switch x := v.(type) {
	case nil:
		return "", true, nil
	case string:
		if err := dateTextRange(x, inner, o); err != nil {
			return "", false, err
		}
		if strings.HasPrefix(inner, "DateTime") && !strings.HasPrefix(inner, "DateTime64") {
			return wholeSeconds(x, o)
		}
		if inner == "Int64" && strings.Contains(x, ":") {
			// a duration's clock text (MySQL TIME with time=duration); the
			// bulk route stores its microseconds
			us, ok := routes.ClockMicros(x)
			if !ok {
				return "", false, fmt.Errorf("%q is not a duration [-]HH:MM:SS[.ffffff]", x)
			}
			return strconv.FormatInt(us, 10), false, nil
		}
		return x, false, nil
	case []byte:
		return string(x), false, nil
	case bool:
		if strings.HasPrefix(inner, "Bool") {
			return strconv.FormatBool(x), false, nil
		}
		return pick(x, "1", "0"), false, nil
	case int64:
		return strconv.FormatInt(x, 10), false, nil
	case uint64:
		return strconv.FormatUint(x, 10), false, nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), false, nil
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), false, nil
	case time.Time:
		// held to the ranges of text (pgoutput's timestamps arrive decoded)
		if err := dateTextRange(x.UTC().Format("2006-01-02 15:04:05.999999999"), inner, o); err != nil {
			return "", false, err
		}
		return timeText(x.UTC(), inner, o)
	case arrow.MonthDayNanoInterval: // pgoutput's, decoded: as the bulk route prints it
		return isoInterval(x), false, nil
	}
	if cdc.IsUnchanged(v) {
		return "", true, nil
	}
	return fmt.Sprint(v), false, nil
}

// floatBits renders a change value for a Float32 or Float64 column as the
// hex of its IEEE bits (little-endian, as reinterpretAsFloat64 reads them;
// see nullableCast), so ClickHouse holds the bits the bulk route's binary
// insert writes: 18.16's text parsers read 5e-324 as 0 and 1.1754944e-38
// (Float32) as 1.1754945e-38. Text (pgoutput's) is parsed by Go, which
// reads NaN and ±Infinity too; ok is false for NULL and Unchanged.
func floatBits(v any, typ string) (s string, ok bool, err error) {
	if typ != "Float64" && typ != "Float32" {
		return "", false, nil
	}
	if b, isBytes := v.([]byte); isBytes {
		v = string(b)
	}
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int64:
		f = float64(x)
	case uint64:
		f = float64(x)
	case string:
		text := strings.TrimSpace(x)
		size := 64
		if typ == "Float32" {
			size = 32
		}
		if f, err = strconv.ParseFloat(text, size); err != nil {
			return "", true, fmt.Errorf("%q is not a %s: %w", text, typ, err)
		}
	default:
		return "", false, nil
	}
	if typ == "Float32" {
		return hex.EncodeToString(binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(f)))), true, nil
	}
	return hex.EncodeToString(binary.LittleEndian.AppendUint64(nil, math.Float64bits(f))), true, nil
}

// dateTextRange holds a date or timestamp text (the source's own: pgoutput's,
// or the binlog's) for a Date, Date32 or DateTime column to the bulk
// route's ranges: ClickHouse's parser wraps a date outside them
// (1000-01-01 became 1970-01-01) where the bulk encoders refuse it.
// Text it cannot read as a date (infinity, a BC date, a year past 9999)
// has no value there either.
func dateTextRange(s, typ string, o Options) error {
	isDate := typ == "Date" || strings.HasPrefix(typ, "Date32")
	if !isDate && (!strings.HasPrefix(typ, "DateTime") || strings.HasPrefix(typ, "DateTime64")) {
		return nil
	}
	if s == "infinity" || s == "-infinity" {
		return infinityErr(s, typ)
	}
	t, ok := parseDateText(s)
	if !ok {
		return fmt.Errorf("%q has no ClickHouse %s value", s, typ)
	}
	if isDate {
		d := floorDiv(t.Unix(), 86400)
		lo, hi, name := int64(0), limit(o.maxDate, maxDate), "Date"
		if strings.HasPrefix(typ, "Date32") {
			lo, hi, name = minDate32, maxDate32, "Date32"
		}
		if d < lo || d > hi {
			day := func(d int64) string { return time.Unix(d*86400, 0).UTC().Format(time.DateOnly) }
			return fmt.Errorf("date %s is outside the ClickHouse %s range (%s to %s)", s, name, day(lo), day(hi))
		}
		return nil
	}
	if max := limit(o.maxDateTime, math.MaxUint32); t.Unix() < 0 || t.Unix() > max {
		return fmt.Errorf("timestamp %s is outside the range of this server's DateTime (1970-01-01 00:00:00 to %s)", s, time.Unix(max, 0).UTC().Format(time.DateTime))
	}
	return nil
}

// parseDateText reads "2006-01-02", with a time of day and fraction, and
// a zone offset as PostgreSQL prints it ("+00", "+05:30").
func parseDateText(s string) (time.Time, bool) {
	for _, layout := range []string{time.DateOnly, "2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07", "2006-01-02 15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// timeText renders a time for a Date, DateTime or DateTime64 column.
func timeText(t time.Time, typ string, o Options) (string, bool, error) {
	switch {
	case strings.HasPrefix(typ, "Date32"), typ == "Date":
		return t.Format(time.DateOnly), false, nil
	case strings.HasPrefix(typ, "DateTime64"):
		return t.Format("2006-01-02 15:04:05.999999999"), false, nil
	case strings.HasPrefix(typ, "DateTime"):
		return wholeSeconds(t.Format("2006-01-02 15:04:05.999999999"), o)
	}
	return t.Format("2006-01-02 15:04:05.999999999"), false, nil
}

// wholeSeconds drops the fraction of a timestamp text for a DateTime
// column, which 18.16's parser would otherwise turn into NULL; a non-zero
// fraction is an error unless subseconds=truncate.
func wholeSeconds(s string, o Options) (string, bool, error) {
	if len(s) <= 19 || s[19] != '.' {
		return s, false, nil
	}
	if strings.Trim(s[20:], "0") != "" && o.Subseconds != "truncate" {
		return "", false, fmt.Errorf("timestamp %s has more fractional digits than ClickHouse DateTime holds (add subseconds=truncate to the destination URL to drop them)", s)
	}
	return s[:19], false, nil
}

// castExpr converts a Nullable(String) input column to column type typ.
// CAST to Nullable keeps NULLs; a non-Nullable column takes the type's
// default for NULL (a tombstone's or a truncate's unset columns).
func castExpr(col, typ string) string {
	t, err := parseType(typ)
	if err != nil {
		return fmt.Sprintf("CAST(%s AS %s)", col, typ)
	}
	if t.Name == "Nullable" {
		return nullableCast(col, *t.Elem)
	}
	switch t.Name {
	case "Array":
		return fmt.Sprintf("CAST(ifNull(%s, '[]') AS %s)", col, typ)
	case "UUID":
		return fmt.Sprintf("toUUID(ifNull(%s, '00000000-0000-0000-0000-000000000000'))", col)
	}
	return "assumeNotNull(" + nullableCast(col, t) + ")"
}

func nullableCast(col string, inner chType) string {
	switch inner.Name {
	case "String":
		return col
	case "UUID":
		return fmt.Sprintf("if(isNull(%[1]s), NULL, toUUID(ifNull(%[1]s, '00000000-0000-0000-0000-000000000000')))", col)
	case "Decimal", "Decimal32", "Decimal64", "Decimal128", "Decimal256":
		// 18.16 parses a NULL's empty nested value too, and fails on it
		return fmt.Sprintf("if(isNull(%[1]s), NULL, CAST(ifNull(%[1]s, '0') AS %s))", col, inner.raw)
	case "Float32", "Float64":
		// the hex of the value's bits (floatBits)
		return fmt.Sprintf("if(isNull(%[1]s), NULL, reinterpretAs%[2]s(unhex(ifNull(%[1]s, ''))))", col, inner.Name)
	}
	return fmt.Sprintf("CAST(%s AS Nullable(%s))", col, inner.raw)
}

// checkCasts fails when a non-NULL input value does not parse as its
// column's type, where CAST to Nullable silently gives NULL (dates and
// times, numbers). 18.16 parses a malformed Decimal as 0 without notice:
// decimals come from the sources' own decimal text, which parses.
func (e *Endpoint) checkCasts(ctx context.Context, in routes.TableRef, cols []string, names []string, types []string) error {
	var conds []string
	var which []int
	var kinds []chType
	for i, typ := range types {
		t, err := parseType(typ)
		if err != nil {
			continue
		}
		if t.Name == "Nullable" {
			t = *t.Elem
		}
		if t.Name == "String" || t.Name == "Array" || t.Name == "UUID" {
			continue // String takes any text; Array and UUID casts fail loudly
		}
		conds = append(conds, fmt.Sprintf("toString(countIf(%s IS NOT NULL AND %s IS NULL))", quoteIdent(names[i]), nullableCast(quoteIdent(names[i]), t)))
		which = append(which, i)
		kinds = append(kinds, t)
	}
	if len(conds) == 0 {
		return nil
	}
	row, _, err := queryRow(ctx, e.conn, fmt.Sprintf("SELECT %s FROM %s", strings.Join(conds, ", "), ident(in)))
	if err != nil {
		return err
	}
	for j, n := range row {
		if n != "0" {
			i := which[j]
			col := quoteIdent(names[i])
			// the input column is Nullable(String): ifNull makes it the
			// String queryRow decodes
			bad, _, err := queryRow(ctx, e.conn, fmt.Sprintf("SELECT ifNull(%s, '') FROM %s WHERE %s IS NOT NULL AND %s IS NULL LIMIT 1",
				col, ident(in), col, nullableCast(col, kinds[j])))
			if err != nil || len(bad) == 0 {
				return fmt.Errorf("column %s: %s values do not parse as ClickHouse %s", cols[i], n, types[i])
			}
			return fmt.Errorf("column %s: %s values do not parse as ClickHouse %s (e.g. %q)", cols[i], n, types[i], bad[0])
		}
	}
	return nil
}

// fillExpr is column i's value: the latest version's (p._weir_p_<i>) when
// the row left it Unchanged, else the cast input value.
func fillExpr(i int, cast string, partial bool) string {
	if !partial {
		return cast
	}
	return fmt.Sprintf("if(has(splitByChar(',', ifNull(_weir_unchanged, '')), '%d'), _weir_p_%d, %s)", i, i, cast)
}

// originKeys returns the destination types of the key columns, and the
// typed origin-key expressions (_weir_k_<i>) the fill joins on: never
// Nullable, as the sorting key is not.
func originKeys(t *cdc.Table, types []string) (keyTypes, exprs []string) {
	for i, k := range t.Key {
		typ := types[k]
		keyTypes = append(keyTypes, typ)
		exprs = append(exprs, fmt.Sprintf("assumeNotNull(%s) AS _weir_k_%d", castExpr(fmt.Sprintf("_weir_o_%d", i), typ), i))
	}
	return keyTypes, exprs
}

// fromInput is the FROM clause of a chunk's INSERT … SELECT: the input
// table with its typed origin keys, and, when some row is partial, joined
// to each origin key's latest version (see prevSQL).
func fromInput(in routes.TableRef, keyExprs []string, prev string) string {
	from := fmt.Sprintf("(SELECT *, %s FROM %s) AS i", strings.Join(keyExprs, ", "), ident(in))
	if prev == "" {
		return from
	}
	kk := make([]string, len(keyExprs))
	for i := range kk {
		kk[i] = fmt.Sprintf("_weir_k_%d", i)
	}
	return fmt.Sprintf("%s ANY LEFT JOIN (%s) AS p USING (%s)", from, prev, strings.Join(kk, ", "))
}

// prevSQL selects, per origin key of the chunk's partial rows, the latest
// version of the row in src (a subquery over the stage and the
// destination or log): its key as _weir_k_<i> and its columns as
// _weir_p_<i>. where keeps live versions only; order puts the latest
// first.
func prevSQL(t *cdc.Table, in routes.TableRef, keyExprs []string, src, where, order string) string {
	var sel, keys, kk []string
	for i, k := range t.Key {
		c := quoteIdent(t.Columns[k])
		sel = append(sel, fmt.Sprintf("assumeNotNull(%s) AS _weir_k_%d", c, i))
		keys = append(keys, fmt.Sprintf("assumeNotNull(%s)", c))
		kk = append(kk, fmt.Sprintf("_weir_k_%d", i))
	}
	for i, c := range t.Columns {
		sel = append(sel, fmt.Sprintf("%s AS _weir_p_%d", quoteIdent(c), i))
	}
	want := fmt.Sprintf("SELECT %s FROM (SELECT %s FROM %s WHERE ifNull(_weir_unchanged, '') != '')",
		strings.Join(kk, ", "), strings.Join(keyExprs, ", "), ident(in))
	return fmt.Sprintf("SELECT %s FROM (%s) WHERE %s AND (%s) IN (%s) ORDER BY %s LIMIT 1 BY %s",
		strings.Join(sel, ", "), src, where, strings.Join(keys, ", "), want, order, strings.Join(keys, ", "))
}
