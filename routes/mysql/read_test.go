package mysql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/routestest"
)

// typesDDL has one column of every common MySQL type.
const typesDDL = `CREATE TABLE types (
  id INT PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED,
  mi MEDIUMINT, miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED,
  bi BIGINT, biu BIGINT UNSIGNED,
  d12 DECIMAL(12,2), d65 DECIMAL(65,30), d38 DECIMAL(38,0), d55 DECIMAL(5,5),
  f FLOAT, dbl DOUBLE,
  b1 BIT(1), b5 BIT(5), b64 BIT(64), bo BOOL,
  dt DATE, dtm DATETIME, dtm6 DATETIME(6), ts TIMESTAMP(6) NULL, tm TIME, tm6 TIME(6), yr YEAR,
  c CHAR(10), vc VARCHAR(100), tx TEXT, ltx LONGTEXT,
  bn BINARY(4), vb VARBINARY(100), bl BLOB, lbl LONGBLOB,
  en ENUM('a','b','ü'), st SET('x','y','z'), js JSON
) ENGINE=InnoDB`

// typesRows: extremes, minimums, all NULL, empties and escapes.
var typesRows = []string{
	`(1, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295,
  9223372036854775807, 18446744073709551615,
  9999999999.99, 99999999999999999999999999999999999.999999999999999999999999999999,
  99999999999999999999999999999999999999, 0.99999,
  16777216, 1.7976931348623157e308,
  b'1', b'11111', b'1111111111111111111111111111111111111111111111111111111111111111', TRUE,
  '9999-12-31', '9999-12-31 23:59:59', '2024-02-29 12:34:56.789012', '2038-01-19 03:14:07.999999', '838:59:59', '23:59:59.999999', 2155,
  'ünïcødé', '日本語 ✓', 'tab\there\nnewline\\backslash', 'quote''"',
  X'00090A5C', X'0D0A00', X'DEADBEEF', X'',
  'ü', 'x,z', '{"a": 1, "b": [true, null]}')`,
	`(2, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0,
  -9223372036854775808, 0,
  -9999999999.99, -99999999999999999999999999999999999.999999999999999999999999999999,
  -99999999999999999999999999999999999999, -0.00001,
  -1.17549435e-38, -4.9e-324,
  b'0', b'0', b'0', FALSE,
  '1000-01-01', '1000-01-01 00:00:00', '1970-01-01 00:00:00.000001', '1970-01-01 00:00:01.000000', '-838:59:59', '00:00:00', 1901,
  '', '', '', '',
  X'00000000', X'', X'', X'00',
  'a', '', '[]')`,
	`(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
}

// wantTypes is what each row reads as, column by column.
var wantTypes = map[string][3]string{
	"ti":   {"127", "-128", "NULL"},
	"tiu":  {"255", "0", "NULL"},
	"si":   {"32767", "-32768", "NULL"},
	"siu":  {"65535", "0", "NULL"},
	"mi":   {"8388607", "-8388608", "NULL"},
	"miu":  {"16777215", "0", "NULL"},
	"i":    {"2147483647", "-2147483648", "NULL"},
	"iu":   {"4294967295", "0", "NULL"},
	"bi":   {"9223372036854775807", "-9223372036854775808", "NULL"},
	"biu":  {"18446744073709551615", "0", "NULL"},
	"d12":  {"9999999999.99", "-9999999999.99", "NULL"},
	"d65":  {"99999999999999999999999999999999999.999999999999999999999999999999", "-99999999999999999999999999999999999.999999999999999999999999999999", "NULL"},
	"d38":  {"99999999999999999999999999999999999999", "-99999999999999999999999999999999999999", "NULL"},
	"d55":  {"0.99999", "-0.00001", "NULL"},
	"f":    {"1.6777216e+07", "-1.1754944e-38", "NULL"},
	"dbl":  {"1.7976931348623157e+308", "-5e-324", "NULL"},
	"b1":   {"true", "false", "NULL"},
	"b5":   {"31", "0", "NULL"},
	"b64":  {"18446744073709551615", "0", "NULL"},
	"bo":   {"true", "false", "NULL"},
	"dt":   {"9999-12-31", "1000-01-01", "NULL"},
	"dtm":  {"9999-12-31 23:59:59.000000", "1000-01-01 00:00:00.000000", "NULL"},
	"dtm6": {"2024-02-29 12:34:56.789012", "1970-01-01 00:00:00.000001", "NULL"},
	"ts":   {"2038-01-19 03:14:07.999999 UTC", "1970-01-01 00:00:01.000000 UTC", "NULL"},
	"tm":   {"838:59:59.000000", "-838:59:59.000000", "NULL"}, // read with time=duration
	"tm6":  {"23:59:59.999999", "00:00:00.000000", "NULL"},
	"yr":   {"2155", "1901", "NULL"},
	"c":    {`"ünïcødé"`, `""`, "NULL"},
	"vc":   {`"日本語 ✓"`, `""`, "NULL"},
	"tx":   {`"tab\there\nnewline\\backslash"`, `""`, "NULL"},
	"ltx":  {`"quote'\""`, `""`, "NULL"},
	"bn":   {"00090a5c", "00000000", "NULL"},
	"vb":   {"0d0a00", "", "NULL"},
	"bl":   {"deadbeef", "", "NULL"},
	"lbl":  {"", "00", "NULL"},
	"en":   {`"ü"`, `"a"`, "NULL"},
	"st":   {`"x,z"`, `""`, "NULL"},
	"js":   {`"{\"a\": 1, \"b\": [true, null]}"`, `"[]"`, "NULL"},
}

// wantArrow is the Arrow type and native type Probe reports per column.
var wantArrow = map[string][2]string{
	"id": {"int32", "int(11)"}, "ti": {"int8", "tinyint(4)"}, "tiu": {"uint8", "tinyint(3) unsigned"},
	"si": {"int16", "smallint(6)"}, "siu": {"uint16", "smallint(5) unsigned"},
	"mi": {"int32", "mediumint(9)"}, "miu": {"uint32", "mediumint(8) unsigned"},
	"i": {"int32", "int(11)"}, "iu": {"uint32", "int(10) unsigned"},
	"bi": {"int64", "bigint(20)"}, "biu": {"uint64", "bigint(20) unsigned"},
	"d12": {"decimal(12, 2)", "decimal(12,2)"}, "d65": {"decimal256(65, 30)", "decimal(65,30)"},
	"d38": {"decimal(38, 0)", "decimal(38,0)"}, "d55": {"decimal(5, 5)", "decimal(5,5)"},
	"f": {"float32", "float"}, "dbl": {"float64", "double"},
	"b1": {"bool", "bit(1)"}, "b5": {"uint64", "bit(5)"}, "b64": {"uint64", "bit(64)"},
	"bo": {"bool", "tinyint(1)"}, "dt": {"date32", "date"},
	"dtm": {"timestamp[us]", "datetime"}, "dtm6": {"timestamp[us]", "datetime(6)"},
	"ts": {"timestamp[us, tz=UTC]", "timestamp(6)"}, "tm": {"time64[us]", "time"},
	"tm6": {"time64[us]", "time(6)"}, "yr": {"int16", "year(4)"},
	"c": {"utf8", "char(10)"}, "vc": {"utf8", "varchar(100)"}, "tx": {"utf8", "text"}, "ltx": {"utf8", "longtext"},
	"bn": {"binary", "binary(4)"}, "vb": {"binary", "varbinary(100)"}, "bl": {"binary", "blob"}, "lbl": {"binary", "longblob"},
	"en": {"utf8", "enum('a','b','ü')"}, "st": {"utf8", "set('x','y','z')"}, "js": {"utf8", "json"},
}

func createTypes(t *testing.T, ctx context.Context, f *mysqltest.Fixture) {
	t.Helper()
	f.Exec(t, ctx, typesDDL, "INSERT INTO types VALUES "+strings.Join(typesRows, ", "))
}

func TestProbe_Types(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	f := mysqltest.New(t)
	createTypes(t, ctx, f)
	info, err := openEndpoint(t, f, "").Probe(ctx, ref(f, "types"))
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Columns) != len(wantArrow) {
		t.Fatalf("%d columns, want %d", len(info.Columns), len(wantArrow))
	}
	for _, c := range info.Columns {
		want := wantArrow[c.Name]
		if c.Type.String() != want[0] || c.NativeType != want[1] {
			t.Errorf("%s: got %s %q, want %s %q", c.Name, c.Type, c.NativeType, want[0], want[1])
		}
	}
	if fmt.Sprint(info.PrimaryKey) != "[id]" || info.Scheme != Scheme {
		t.Errorf("primary key %v scheme %s", info.PrimaryKey, info.Scheme)
	}
	md := info.Schema().Field(len(info.Columns) - 1).Metadata
	if v, _ := md.GetValue(routes.MetaNativeType); v != "json" {
		t.Errorf("js field metadata native type %q, want json", v)
	}
}

func TestRead_Types(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	f := mysqltest.New(t)
	createTypes(t, ctx, f)
	got := readAll(t, ctx, openEndpoint(t, f, "time=duration"), ref(f, "types"), 1<<20)
	for col, want := range wantTypes {
		if got[col] != want {
			t.Errorf("%s:\n got %q\nwant %q", col, got[col], want)
		}
	}
}

// readAll reads a table through Probe/Plan/Read with a checked allocator and
// renders every column's values, row by row.
func readAll(t *testing.T, ctx context.Context, e *Endpoint, table routes.TableRef, chunk int) map[string][3]string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	out := map[string][3]string{}
	rows := 0
	err := forEachBatch(t, ctx, e, table, routes.ReadOptions{Allocator: mem, ChunkBytes: chunk}, func(b arrow.RecordBatch) {
		for c, col := range b.Columns() {
			name := b.Schema().Field(c).Name
			v := out[name]
			for i := 0; i < col.Len() && rows+i < 3; i++ {
				v[rows+i] = render(col, i)
			}
			out[name] = v
		}
		rows += int(b.NumRows())
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// forEachBatch runs fn on every batch of every planned range.
func forEachBatch(t *testing.T, ctx context.Context, e *Endpoint, table routes.TableRef, opts routes.ReadOptions, fn func(arrow.RecordBatch)) error {
	t.Helper()
	info, err := e.Probe(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	ranges, err := e.Plan(ctx, info, routes.PlanOptions{Pipes: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ranges {
		s, err := e.Read(ctx, r, opts)
		if err != nil {
			t.Fatal(err)
		}
		for s.Next() {
			fn(s.RecordBatch())
		}
		err = s.Err()
		s.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// render is an independent text form of one Arrow value.
func render(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "NULL"
	}
	switch a := a.(type) {
	case *array.Decimal128:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Decimal256:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal256Type).Scale)
	case *array.Timestamp:
		s := time.UnixMicro(int64(a.Value(i))).UTC().Format("2006-01-02 15:04:05.000000")
		if tz := a.DataType().(*arrow.TimestampType).TimeZone; tz != "" {
			s += " " + tz
		}
		return s
	case *array.Date32:
		return a.Value(i).ToTime().Format(time.DateOnly)
	case *array.Time64:
		return string(appendClock(nil, int64(a.Value(i))))
	case *array.Duration:
		return string(appendClock(nil, int64(a.Value(i))))
	case *array.String:
		return fmt.Sprintf("%q", a.Value(i))
	case *array.Binary:
		return fmt.Sprintf("%x", a.Value(i))
	case *array.Float32:
		return fmt.Sprint(a.Value(i))
	}
	return a.ValueStr(i)
}

func TestRead_Time(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	f := mysqltest.New(t)
	f.Exec(t, ctx, "CREATE TABLE tm (id INT PRIMARY KEY, t TIME(6))",
		"INSERT INTO tm VALUES (1, '-838:59:59.000000'), (2, '838:59:59.999999'), (3, '00:00:00'), (4, NULL)")
	e := openEndpoint(t, f, "time=duration")
	got := readAll(t, ctx, e, ref(f, "tm"), 1<<20)["t"]
	if want := [3]string{"-838:59:59.000000", "838:59:59.999999", "00:00:00.000000"}; got != want {
		t.Errorf("time=duration: got %q, want %q", got, want)
	}
	err := forEachBatch(t, ctx, openEndpoint(t, f, ""), ref(f, "tm"), routes.ReadOptions{}, func(arrow.RecordBatch) {})
	var pe *routes.ProbeError
	if !errors.As(err, &pe) || pe.Column != "t" || !strings.Contains(pe.Hint, "time=duration") {
		t.Fatalf("TIME outside a day as time64: got %v, want a ProbeError on t with the time=duration hint", err)
	}
}

func TestProbe_Missing(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	f := mysqltest.New(t)
	_, err := openEndpoint(t, f, "").Probe(ctx, ref(f, "nope"))
	var pe *routes.ProbeError
	if !errors.As(err, &pe) || !errors.Is(err, routes.ErrNotFound) || !errors.Is(err, routes.ErrBadInput) {
		t.Fatalf("got %v, want a not-found ProbeError", err)
	}
	e := openEndpoint(t, f, "")
	e.dbName = ""
	if _, err := e.Probe(ctx, routes.TableRef{Name: "t"}); !errors.Is(err, routes.ErrBadInput) {
		t.Errorf("unqualified table without a database in the URL: %v", err)
	}
}
