package postgres

import (
	"bytes"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
)

// allTypesSQL creates %[1]s.t with every type the codec maps, an enum and
// an inet (read as text), and fills it: typical values, all NULLs,
// maxima (with a 5 MB text and a 5 MB bytea), minima, small and special
// values, then generated rows.
var allTypesSQL = []string{
	`CREATE TYPE %[1]s.mood AS ENUM ('sad', 'ok', 'happy ☺')`,
	`CREATE TABLE %[1]s.t (id integer PRIMARY KEY,
		i2 smallint, i4 integer, i8 bigint, o oid, f4 real, f8 double precision, b boolean,
		n10 numeric(10,2), n38 numeric(38,10), n76 numeric(76,20), nneg numeric(5,-2), nsmall numeric(3,5), nb numeric,
		tx text, vc varchar(20), vcn varchar, bc char(5), ch "char", nm name, js json, jb jsonb, by bytea,
		d date, tm time, tm3 time(3), ts timestamp, ts3 timestamp(3), tz timestamptz, iv interval, u uuid,
		ai integer[], ai8 bigint[], atx text[], an numeric(10,2)[], anb numeric[], atz timestamptz[], aby bytea[],
		au uuid[], ajb jsonb[], abo boolean[], ad date[], aiv interval[], af8 float8[], avc varchar(10)[],
		e %[1]s.mood, ip inet, ae %[1]s.mood[])`,
	`INSERT INTO %[1]s.t VALUES (1, 1, 2, 3, 4, 1.5, 2.25, true, 12345678.91, 1.5, 2.5, 12300, 0.00012, 3.14159,
		'hello ☺ wörld', 'varchar', 'vcn', 'ab', 'x', 'name', '{"a": 1}', '{"b": [1, 2]}', '\xdeadbeef',
		'2024-02-29', '12:34:56.789012', '12:34:56.789', '2024-02-29 12:34:56.789012', '2024-02-29 12:34:56.789',
		'2024-02-29 12:34:56.789012+02', '1 year 2 mons 3 days 04:05:06.789', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
		'{1,NULL,3}', '{9223372036854775807,-1}', '{a,NULL,"",ü}', '{1.50,NULL}', '{1.5,NaN,-Infinity}',
		'{infinity,"2024-01-01 00:00:00+00",NULL}', '{"\\x00ff",NULL}', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}',
		ARRAY['{"k": 1}'::jsonb, NULL], '{t,f,NULL}', '{2024-01-01,-infinity}', '{"1 day",NULL}', '{1.5,NaN,Infinity}',
		'{abc,""}', 'happy ☺', '192.168.0.1/24', '{sad,NULL}')`,
	`INSERT INTO %[1]s.t (id) VALUES (2)`,
	`INSERT INTO %[1]s.t VALUES (3, 32767, 2147483647, 9223372036854775807, 4294967295, 'Infinity', 'NaN', false,
		99999999.99, (repeat('9', 28) || '.' || repeat('9', 10))::numeric, (repeat('9', 56) || '.' || repeat('9', 20))::numeric,
		9999900, 0.00999, (repeat('7', 1000) || '.' || repeat('3', 50))::numeric,
		repeat('ab☺', 1000000), '', '', '', '', '', '[]', '{}', decode(repeat('00ff', 2500000), 'hex'),
		'infinity', '24:00:00', '23:59:59.999', 'infinity', 'infinity', 'infinity', '178000000 years',
		'ffffffff-ffff-ffff-ffff-ffffffffffff', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}',
		'sad', '2001:db8::/32', '{}')`,
	`INSERT INTO %[1]s.t VALUES (4, -32768, -2147483648, -9223372036854775808, 0, '-Infinity', '-0', false,
		-99999999.99, ('-' || repeat('9', 28) || '.' || repeat('9', 10))::numeric, ('-' || repeat('9', 56) || '.' || repeat('9', 20))::numeric,
		-9999900, -0.00999, 'NaN', E'tab\there "quoted" \\back\nline', 'ÿ', 'x', 'ÿ', 'ÿ', 'ünïcödé',
		'  {"spaces" :  true }  ', '{"z": null, "a": [true, 1.5e3]}', '\x', '-infinity', '00:00:00', '00:00:00',
		'-infinity', '4713-01-01 00:00:00 BC', '-infinity', '-1 years -2 mons +3 days -04:05:06.000001',
		'00000000-0000-0000-0000-000000000000', '{NULL}', '{NULL,NULL}', '{NULL}', '{NULL}', '{NULL}', '{NULL}', '{NULL}',
		'{NULL}', '{NULL}', '{NULL}', '{NULL}', '{NULL}', '{NULL}', '{NULL}', 'ok', '10.0.0.0/8', '{"happy ☺"}')`,
	`INSERT INTO %[1]s.t (id, n10, n38, n76, nneg, nsmall, nb, d, ts, tz, tm, vc) VALUES
		(5, 0.01, 0.0000000001, -0.00000000000000000001, 0, -0.00001, 'Infinity', '1999-12-31',
		 '1969-12-31 23:59:59.999999', '1970-01-01 00:00:00+00', '00:00:00.000001', 'x'),
		(6, 0, 0, 0, 0, 0, '0.000', '2000-01-01', '2000-01-01', '2000-01-01 00:00:00+00', '23:59:59.999999', '')`,
	`INSERT INTO %[1]s.t (id, i2, i4, i8, f8, b, n10, n38, nb, tx, d, ts, tz, iv, u, ai, atx, an, e)
		SELECT i, (i %% 30000)::smallint, i * 7, i::bigint * 1000003, i / 7.0, i %% 2 = 0, (i * 1.37)::numeric(10,2),
		(i / 3.0)::numeric(38,10), i::numeric / 7, md5(i::text), date '2000-01-01' + i,
		timestamp '1999-12-31 23:59:59' + i * interval '1 minute 1.000001 second',
		timestamptz '1999-12-31 23:59:59+00' - i * interval '1 day 1.5 second',
		make_interval(months => i, days => -i, secs => i / 1000.0), md5(i::text)::uuid, ARRAY[i, -i],
		ARRAY[md5(i::text), NULL], ARRAY[(i * 0.5)::numeric(10,2)], (ARRAY['sad', 'ok', 'happy ☺'])[i %% 3 + 1]::%[1]s.mood
		FROM generate_series(7, 1000) i`,
}

const allTypesRows = 1000

// rowOf finds the row with the given id among batches.
func rowOf(t *testing.T, batches []arrow.RecordBatch, id int32) (arrow.RecordBatch, int) {
	t.Helper()
	for _, b := range batches {
		ids := batchColumn(t, b, "id").(*array.Int32)
		for i := range ids.Len() {
			if ids.Value(i) == id {
				return b, i
			}
		}
	}
	t.Fatalf("no row %d", id)
	return nil, 0
}

func micros(y int, m time.Month, d, h, mi, s, us int) int64 {
	return time.Date(y, m, d, h, mi, s, us*1000, time.UTC).UnixMicro()
}

// checkAllTypesValues checks decoded Arrow values against the inserts.
func checkAllTypesValues(t *testing.T, batches []arrow.RecordBatch) {
	t.Helper()
	b, i := rowOf(t, batches, 1)
	want := map[string]any{
		"i2": int16(1), "i8": int64(3), "o": uint32(4), "f4": float32(1.5), "b": true,
		"n10": "12345678.91", "n76": "2.50000000000000000000", "nneg": "12300", "nsmall": "0.00012", "nb": "3.14159",
		"tx": "hello ☺ wörld", "bc": "ab   ", "ch": "x", "js": `{"a": 1}`, "jb": `{"b": [1, 2]}`,
		"by": []byte{0xde, 0xad, 0xbe, 0xef}, "d": arrow.Date32(19782),
		"tm": arrow.Time64((12*3600+34*60+56)*1000000 + 789012),
		"ts": arrow.Timestamp(micros(2024, 2, 29, 12, 34, 56, 789012)),
		"tz": arrow.Timestamp(micros(2024, 2, 29, 10, 34, 56, 789012)),
		"iv": arrow.MonthDayNanoInterval{Months: 14, Days: 3, Nanoseconds: (4*3600+5*60+6)*1e9 + 789e6},
		"u":  uuidBytes, "e": "happy ☺", "ip": "192.168.0.1/24",
		"ai": "[1 (null) 3]", "atx": `["a" (null) "" "ü"]`, "an": "[1.50 (null)]", "anb": `["1.5" "NaN" "-Infinity"]`,
		"atz": "[" + tsString(math.MaxInt64) + " " + tsString(micros(2024, 1, 1, 0, 0, 0, 0)) + " (null)]", "ae": `["sad" (null)]`,
	}
	checkRow(t, b, i, want)
	b, i = rowOf(t, batches, 2)
	for j, f := range b.Schema().Fields() {
		if f.Name != "id" && !b.Column(j).IsNull(i) {
			t.Errorf("row 2 %s: not NULL", f.Name)
		}
	}
	b, i = rowOf(t, batches, 3)
	checkRow(t, b, i, map[string]any{
		"i8": int64(math.MaxInt64), "o": uint32(math.MaxUint32), "f4": float32(math.Inf(1)),
		"n38": strings.Repeat("9", 28) + "." + strings.Repeat("9", 10), "n76": strings.Repeat("9", 56) + "." + strings.Repeat("9", 20),
		"nb": strings.Repeat("7", 1000) + "." + strings.Repeat("3", 50), "tx": strings.Repeat("ab☺", 1000000),
		"by": bytes.Repeat([]byte{0, 0xff}, 2500000), "ch": "", "bc": "     ", "d": arrow.Date32(math.MaxInt32),
		"tm": arrow.Time64(86400000000), "ts": arrow.Timestamp(math.MaxInt64), "tz": arrow.Timestamp(math.MaxInt64),
		"iv": arrow.MonthDayNanoInterval{Months: 2136000000}, "ai": "[]", "atz": "[]", "ip": "2001:db8::/32",
	})
	b, i = rowOf(t, batches, 4)
	checkRow(t, b, i, map[string]any{
		"i8": int64(math.MinInt64), "n38": "-" + strings.Repeat("9", 28) + "." + strings.Repeat("9", 10),
		"nb": "NaN", "ch": `\303`, "by": []byte{}, "d": arrow.Date32(math.MinInt32), "ts": arrow.Timestamp(math.MinInt64),
		"ai": "[(null)]", "ai8": "[(null) (null)]", "jb": `{"a": [true, 1500], "z": null}`,
	})
	b, i = rowOf(t, batches, 5)
	checkRow(t, b, i, map[string]any{
		"n38": "0.0000000001", "n76": "-0.00000000000000000001", "nsmall": "-0.00001", "nb": "Infinity",
		"d": arrow.Date32(10956), "ts": arrow.Timestamp(-1), "tz": arrow.Timestamp(0), "tm": arrow.Time64(1),
	})
}

func tsString(us int64) string {
	return arrow.Timestamp(us).ToTime(arrow.Microsecond).Format("2006-01-02 15:04:05.999999999Z0700")
}

// checkRow compares row i of b with want: Arrow scalars as they are, []byte
// and [16]byte with bytes.Equal, strings with ValueStr (decimals as text,
// lists in Arrow's format).
func checkRow(t *testing.T, b arrow.RecordBatch, i int, want map[string]any) {
	t.Helper()
	id := batchColumn(t, b, "id").(*array.Int32).Value(i)
	for name, w := range want {
		a := batchColumn(t, b, name)
		if a.IsNull(i) {
			t.Errorf("row %d %s: NULL, want %v", id, name, w)
			continue
		}
		if got := cellValue(a, i); !sameValue(got, w) {
			t.Errorf("row %d %s: %.100v, want %.100v", id, name, got, w)
		}
	}
}

// cellValue reads a cell as a comparable Go value: fixed-width values as
// they are, decimals as exact text, lists as "[e1 e2 (null)]".
func cellValue(a arrow.Array, i int) any {
	switch a := a.(type) {
	case *array.Int16:
		return a.Value(i)
	case *array.Int32:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Uint32:
		return a.Value(i)
	case *array.Float32:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.Date32:
		return a.Value(i)
	case *array.Time64:
		return a.Value(i)
	case *array.Timestamp:
		return a.Value(i)
	case *array.MonthDayNanoInterval:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.Binary:
		return a.Value(i)
	case *extensions.UUIDArray:
		return [16]byte(a.Value(i))
	}
	return cellText(a, i)
}

func cellText(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "(null)"
	}
	switch a := a.(type) {
	case *array.Decimal128:
		return decimalText(a.Value(i).BigInt(), a.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Decimal256:
		return decimalText(a.Value(i).BigInt(), a.DataType().(*arrow.Decimal256Type).Scale)
	case *array.String:
		return strconv.Quote(a.Value(i))
	case *array.Timestamp:
		return tsString(int64(a.Value(i)))
	case *array.List:
		start, end := a.ValueOffsets(i)
		parts := []string{}
		for j := start; j < end; j++ {
			parts = append(parts, cellText(a.ListValues(), int(j)))
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return a.ValueStr(i)
}

// decimalText prints an unscaled integer with scale digits after the point.
func decimalText(v *big.Int, scale int32) string {
	neg := v.Sign() < 0
	digits := new(big.Int).Abs(v).String()
	if scale > 0 {
		if pad := int(scale) + 1 - len(digits); pad > 0 {
			digits = strings.Repeat("0", pad) + digits
		}
		digits = digits[:len(digits)-int(scale)] + "." + digits[len(digits)-int(scale):]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

func sameValue(got, want any) bool {
	g, ok1 := got.([]byte)
	w, ok2 := want.([]byte)
	if ok1 || ok2 {
		return ok1 && ok2 && bytes.Equal(g, w)
	}
	return got == want
}
