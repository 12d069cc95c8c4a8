package clickhouse

import (
	"context"
	"fmt"
	"strings"

	"github.com/weirhq/weir/routes"
)

// checkDrift refuses an append or merge (and a replica's or log's run)
// whose source column no longer fits the destination's: the staging
// table is made AS the destination, so the insert would round a decimal
// whose scale or integer digits grew, or fail on a value halfway through
// (a double into an Int32, a timestamp into a Date). A type the
// destination holds exactly, or refuses value by value with an error
// (routes.Holds; the route's encoders check integer ranges, a decimal's
// digits, a date's range, a timestamp's fractional digits), is kept.
// ClickHouse cannot widen in the commit's step (ALTER … MODIFY COLUMN is
// a mutation), so the user decides, for a decimal's integer digits too.
func (st *stage) checkDrift(ctx context.Context) error {
	types, err := st.e.columnTypes(ctx, st.dest)
	if err != nil {
		return err
	}
	for _, c := range st.info.Columns {
		want := destType(c, st.info.Scheme, st.e.feat)
		have, ok := types[c.Name]
		if !ok {
			continue
		}
		d, s := chColumnType(have), chColumnType(want)
		narrower := d.Kind == routes.KindDecimal && s.Kind == routes.KindDecimal && d.Precision-d.Scale < s.Precision-s.Scale
		if narrower || !routes.Holds(d, s, casts) {
			return routes.LossyError(st.dest, c.Name, want, have,
				fmt.Sprintf("ALTER TABLE %s MODIFY COLUMN %s %s", ident(st.dest), quoteIdent(c.Name), want))
		}
	}
	return nil
}

// casts: the route's encoders write a float into a String as its shortest
// exact digits, and a boolean into a number as 0 or 1.
var casts = routes.Casts{FloatText: true, BoolNumber: true}

// chColumnType maps a ClickHouse type (parseType's, Nullable and
// LowCardinality unwrapped) to the type the lossy-cast rule compares.
// A DateTime keeps instants: in UTC (the zone weir creates it in), or in
// no named zone, it reads as a wall clock; another zone is kept. A
// FixedString(n) is fixed-width text (a String holds bytes as they are).
// Types not compared (arrays, UUID, Enum, …) are routes.KindOther.
func chColumnType(typ string) routes.ColumnType {
	t, err := parseType(typ)
	for err == nil && (t.Name == "Nullable" || t.Name == "LowCardinality") {
		t = *t.Elem
	}
	switch {
	case err != nil:
		return routes.ColumnType{}
	case intWidth(t.Name) > 0:
		return routes.ColumnType{Kind: routes.KindInt, Bits: routes.IntBits(intWidth(t.Name)*8, t.Name[0] != 'U')}
	case strings.HasPrefix(t.Name, "Decimal"):
		p, s := decimalParams(t)
		return routes.ColumnType{Kind: routes.KindDecimal, Precision: p, Scale: s}
	case t.Name == "FixedString": // pads with NUL bytes, kept on read: 'ab' into FixedString(3) reads back as 'ab\0'
		n, _ := t.intArg(0)
		return routes.ColumnType{Kind: routes.KindText, Width: n}
	case t.Name == "DateTime" || t.Name == "DateTime64":
		at := dateTimeArrow(t)
		digits := 0
		if t.Name == "DateTime64" {
			digits, _ = t.intArg(0)
		}
		zone := at.TimeZone
		if zone == "UTC" {
			zone = ""
		}
		return routes.ColumnType{Kind: routes.KindTimestamp, Digits: digits, Zone: zone}
	}
	return map[string]routes.ColumnType{
		"Float32": {Kind: routes.KindFloat, Bits: 32}, "Float64": {Kind: routes.KindFloat, Bits: 64},
		"Date": {Kind: routes.KindDate}, "Date32": {Kind: routes.KindDate},
		"String": {Kind: routes.KindText}, "Bool": {Kind: routes.KindBool},
	}[t.Name]
}
