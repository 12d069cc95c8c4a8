package weir_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/weirhq/weir/cdc/cdctest"
)

// The torture cases per source: each value's literal and the canonical
// text (cdctest.DB.Rows) of what the source's server holds for it.
// Refuse lists the destinations that must refuse the table (bad input
// naming it and v); every other destination must hold every value exact.

var pgTorture = []cdctest.Case{
	{Name: "bytea", Type: "bytea", Values: []cdctest.Value{w(`'\x41420000'`, "41420000"), w(`'\x00004142'`, "00004142"), w(`'\x'`, ""), w(`'\x00'`, "00")}},
	{Name: "float8", Type: "float8", Values: []cdctest.Value{w("'NaN'", "NaN"), w("'Infinity'", "+Inf"), w("'-Infinity'", "-Inf"),
		w("1.7976931348623157e308", "1.7976931348623157e+308"), w("5e-324", "5e-324"), w("'-0'", "-0"), w("0.1", "0.1")}, Refuse: "mysql"},
	{Name: "float4", Type: "float4", Values: []cdctest.Value{w("'NaN'", "NaN"), w("'Infinity'", "+Inf"), w("'-Infinity'", "-Inf"),
		w("3.4028235e38", "3.4028235e+38"), w("1.4e-45", "1e-45"), w("0.1", "0.1")}, Refuse: "mysql"},
	{Name: "int2", Type: "int2", Values: vs("-32768", "32767", "0")},
	{Name: "int4", Type: "int4", Values: vs("-2147483648", "2147483647")},
	{Name: "int8", Type: "int8", Values: vs("-9223372036854775808", "9223372036854775807")},
	{Name: "numeric", Type: "numeric(38,18)", Values: []cdctest.Value{v("99999999999999999999.999999999999999999"), v("-0.000000000000000001"), w("0", "0.000000000000000000")}},
	{Name: "numeric0", Type: "numeric(38,0)", Values: vs("99999999999999999999999999999999999999", "-99999999999999999999999999999999999999")},
	// precisions a Parquet file stores as INT32 (≤ 9) and INT64 (≤ 18)
	{Name: "numeric9", Type: "numeric(9,2)", Values: vs("9999999.99", "-9999999.99", "0.01")},
	{Name: "numeric18", Type: "numeric(18,4)", Values: vs("99999999999999.9999", "-99999999999999.9999", "-0.0001")},
	{Name: "text", Type: "text", Values: []cdctest.Value{v(""), v("é"), v("😀🎉 𝄞"), w(`E'a\tb\nc'`, "a\tb\nc"), v(`\N`), v(" "), v(`back\slash`)}},
	{Name: "varchar", Type: "varchar(3)", Values: []cdctest.Value{v("abc"), v("ü😀x"), v("")}},
	{Name: "ts", Type: "timestamp", Values: []cdctest.Value{w("'1970-01-01 00:00:00'", "1970-01-01 00:00:00.000000"),
		w("'2024-02-29 12:34:56.789012'", "2024-02-29 12:34:56.789012"), w("'9999-12-31 23:59:59.999999'", "9999-12-31 23:59:59.999999"),
		w("'0001-01-01 00:00:00'", "0001-01-01 00:00:00.000000")}, Refuse: "clickhouse"},
	{Name: "tsinf", Type: "timestamp", Values: []cdctest.Value{w("'infinity'", "infinity"), w("'-infinity'", "-infinity")}, Refuse: "mysql,clickhouse,iceberg"},
	{Name: "tsbc", Type: "timestamp", Values: []cdctest.Value{w("'0044-03-15 12:00:00 BC'", "-0043-03-15 12:00:00.000000")}, Refuse: "mysql,clickhouse"},
	{Name: "ts10000", Type: "timestamp", Values: []cdctest.Value{w("'10000-01-01 00:00:00'", "10000-01-01 00:00:00.000000")}, Refuse: "mysql,clickhouse"},
	{Name: "tstz", Type: "timestamptz", Values: []cdctest.Value{w("'2024-01-02 03:04:05.123456+05:30'", "2024-01-01 21:34:05.123456"), w("'1970-01-01 00:00:00+00'", "1970-01-01 00:00:00.000000")}, Refuse: "clickhouse"},
	{Name: "date", Type: "date", Values: vs("'1970-01-01'", "'2024-02-29'", "'9999-12-31'", "'0001-01-01'"), Refuse: "clickhouse"},
	{Name: "dateinf", Type: "date", Values: []cdctest.Value{w("'infinity'", "infinity"), w("'-infinity'", "-infinity")}, Refuse: "mysql,clickhouse,iceberg"},
	{Name: "datebc", Type: "date", Values: []cdctest.Value{w("'0044-03-15 BC'", "-0043-03-15")}, Refuse: "mysql,clickhouse"},
	{Name: "date10000", Type: "date", Values: vs("'10000-01-01'"), Refuse: "mysql,clickhouse"},
	{Name: "time", Type: "time", Values: []cdctest.Value{w("'00:00:00'", "00:00:00.000000"), w("'23:59:59.999999'", "23:59:59.999999"), w("'24:00:00'", "24:00:00.000000")}},
	{Name: "bool", Type: "bool", Values: vs("true", "false")},
	{Name: "uuid", Type: "uuid", Values: vs("'00000000-0000-0000-0000-000000000000'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'")},
	{Name: "json", Type: "json", Values: []cdctest.Value{v(`{"a":1,"a":2}`), v(`{"b" : [1, 2.50]}`)}},
	{Name: "jsonb", Type: "jsonb", Values: []cdctest.Value{w(`'{"a":1,"a":2}'`, `{"a": 2}`), w(`'{"b" : [1, 2.50]}'`, `{"b": [1, 2.50]}`)}},
	{Name: "pair", Type: "{schema}.pair", Values: []cdctest.Value{w("ROW(NULL, NULL)", "(,)"), w("ROW(1, '')", `(1,"")`)}},
}

func openPGTorture(t *testing.T, ctx context.Context, cases []cdctest.Case) *cdctest.DB {
	src := cdctest.Open(t, ctx, "postgres")
	src.Exec(t, ctx, "CREATE TYPE "+src.Schema+".pair AS (a int, b text)")
	for _, c := range cases {
		typ := strings.ReplaceAll(c.Type, "{schema}", src.Schema)
		src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id int PRIMARY KEY, v %s)", src.Table(c.Table()), typ))
		src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES %s", src.Table(c.Table()), c.Insert()))
	}
	return src
}

var mysqlTorture = []cdctest.Case{
	{Name: "bin", Type: "BINARY(4)", Values: []cdctest.Value{w("x'41420000'", "41420000"), w("x'00004142'", "00004142"), w("x'00000000'", "00000000"), w("x'FFFFFFFF'", "FFFFFFFF")}},
	{Name: "varbin", Type: "VARBINARY(8)", Values: []cdctest.Value{w("x'4100'", "4100"), w("x''", ""), w("x'00'", "00")}},
	{Name: "blob", Type: "BLOB", Values: []cdctest.Value{w("x''", ""), w("x'00ff00'", "00FF00")}},
	{Name: "tinyint", Type: "TINYINT", Values: vs("-128", "127")},
	{Name: "utinyint", Type: "TINYINT UNSIGNED", Values: vs("255", "0")},
	{Name: "int", Type: "INT", Values: vs("-2147483648", "2147483647")},
	{Name: "uint", Type: "INT UNSIGNED", Values: vs("4294967295")},
	{Name: "bigint", Type: "BIGINT", Values: vs("-9223372036854775808", "9223372036854775807")},
	{Name: "ubigint", Type: "BIGINT UNSIGNED", Values: vs("18446744073709551615", "9223372036854775808", "0")},
	{Name: "dec9", Type: "DECIMAL(9,0)", Values: vs("999999999", "-999999999")},
	{Name: "dec18", Type: "DECIMAL(18,6)", Values: vs("999999999999.999999", "-999999999999.999999", "0.000001")},
	{Name: "dec38", Type: "DECIMAL(38,18)", Values: []cdctest.Value{v("99999999999999999999.999999999999999999"), v("-0.000000000000000001")}},
	{Name: "dec65", Type: "DECIMAL(65,30)", Values: []cdctest.Value{v("99999999999999999999999999999999999.999999999999999999999999999999"), v("-0.000000000000000000000000000001")}},
	{Name: "double", Type: "DOUBLE", Values: []cdctest.Value{w("1.7976931348623157e308", "1.7976931348623157e+308"), w("-2.2250738585072014e-308", "-2.2250738585072014e-308"), w("0.1", "0.1")}},
	{Name: "float", Type: "FLOAT", Values: []cdctest.Value{w("3.40282e38", "3.40282e+38"), w("0.5", "0.5")}},
	{Name: "str", Type: "VARCHAR(20)", Values: []cdctest.Value{v(""), v("é"), v("😀🎉 𝄞"), w(`'a\tb\nc'`, "a\tb\nc"), w(`'\\N'`, `\N`), v(" "), w(`'back\\slash'`, `back\slash`)}},
	{Name: "char", Type: "CHAR(5)", Values: []cdctest.Value{v(""), v("ab"), v("ü😀")}},
	{Name: "date", Type: "DATE", Values: vs("'1000-01-01'", "'9999-12-31'", "'1970-01-01'"), Refuse: "clickhouse"},
	{Name: "datezero", Type: "DATE", Values: []cdctest.Value{w("'0000-00-00'", ""), w("'2024-02-00'", "")}, Refuse: "source"},
	{Name: "datetime", Type: "DATETIME(6)", Values: []cdctest.Value{w("'1000-01-01 00:00:00'", "1000-01-01 00:00:00.000000"), w("'9999-12-31 23:59:59.999999'", "9999-12-31 23:59:59.999999")}, Refuse: "clickhouse"},
	{Name: "timestamp", Type: "TIMESTAMP(6) NULL", Values: []cdctest.Value{w("'1970-01-01 00:00:01'", "1970-01-01 00:00:01.000000"), w("'2038-01-19 03:14:07.999999'", "2038-01-19 03:14:07.999999")}, Refuse: "clickhouse"},
	{Name: "time", Type: "TIME(6)", Values: []cdctest.Value{w("'00:00:00'", "00:00:00.000000"), w("'23:59:59.999999'", "23:59:59.999999")}},
	{Name: "timewide", Type: "TIME(6)", Values: []cdctest.Value{w("'838:59:59'", ""), w("'-00:00:01'", "")}, Refuse: "source"},
	{Name: "year", Type: "YEAR", Values: vs("0", "1901", "2155")},
	{Name: "json", Type: "JSON", Values: []cdctest.Value{v(`{"a":1,"a":2}`), v(`{"b" : [1, 2.50]}`)}},
	{Name: "enum", Type: "ENUM('', 'a', 'ü')", Values: []cdctest.Value{v(""), v("a"), v("ü")}},
}

func openMySQLTorture(t *testing.T, ctx context.Context, cases []cdctest.Case) *cdctest.DB {
	src := cdctest.Open(t, ctx, "mysql")
	for _, c := range cases {
		src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, v %s)", src.Table(c.Table()), c.Type))
		// a permissive sql_mode lets zero and invalid dates in
		src.Exec(t, ctx, fmt.Sprintf("SET SESSION sql_mode = ''; INSERT INTO %s VALUES %s; SET SESSION sql_mode = DEFAULT", src.Table(c.Table()), c.Insert()))
	}
	return src
}

var chTorture = []cdctest.Case{
	{Name: "int8", Type: "Int8", Values: vs("-128", "127")},
	{Name: "uint8", Type: "UInt8", Values: vs("255", "0")},
	{Name: "int64", Type: "Int64", Values: vs("-9223372036854775808", "9223372036854775807")},
	{Name: "uint64", Type: "UInt64", Values: vs("18446744073709551615", "0")},
	{Name: "float64", Type: "Float64", Values: []cdctest.Value{w("nan", "NaN"), w("inf", "+Inf"), w("-inf", "-Inf"), w("1.7976931348623157e308", "1.7976931348623157e+308"), w("-0.", "-0"), w("0.1", "0.1")}, Refuse: "mysql"},
	{Name: "float32", Type: "Float32", Values: []cdctest.Value{w("nan", "NaN"), w("inf", "+Inf"), w("toFloat32(3.4028235e38)", "3.4028235e+38"), w("toFloat32(0.1)", "0.1")}, Refuse: "mysql"},
	{Name: "dec9", Type: "Decimal(9,2)", Values: vs("9999999.99", "-9999999.99")},
	{Name: "dec18", Type: "Decimal(18,18)", Values: vs("0.999999999999999999", "-0.999999999999999999")},
	{Name: "dec", Type: "Decimal(38,18)", Values: vs("99999999999999999999.999999999999999999", "-0.000000000000000001")},
	{Name: "str", Type: "String", Values: []cdctest.Value{v(""), v("é"), v("😀🎉 𝄞"), w(`'a\tb\nc'`, "a\tb\nc"), w(`'\\N'`, `\N`), v(" ")}},
	{Name: "fixed", Type: "FixedString(4)", Values: []cdctest.Value{w(`'AB\0\0'`, "41420000"), w(`'\0\0AB'`, "00004142"), w(`'abcd'`, "61626364")}},
	{Name: "strbytes", Type: "String", Values: []cdctest.Value{w(`'\xFF\xFE'`, "\xff\xfe"), w(`'a\0b'`, "a\x00b")}, Refuse: "postgres,mysql"},
	{Name: "date", Type: "Date", Values: vs("'1970-01-01'", "'2105-12-31'", "'2024-02-29'")},
	{Name: "datetime", Type: "DateTime", Values: []cdctest.Value{w("'1970-01-01 00:00:00'", "1970-01-01 00:00:00.000000"), w("'2105-12-31 23:59:59'", "2105-12-31 23:59:59.000000")}},
	{Name: "uuid", Type: "UUID", Values: vs("'00000000-0000-0000-0000-000000000000'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'")},
	{Name: "enum", Type: "Enum8('a' = 1, 'ü' = -128)", Values: vs("'a'", "'ü'")},
}

func openCHTorture(t *testing.T, ctx context.Context, cases []cdctest.Case) *cdctest.DB {
	src := cdctest.Open(t, ctx, "clickhouse")
	for _, c := range cases {
		src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id Int32, v Nullable(%s)) ENGINE = MergeTree ORDER BY id", src.Table(c.Table()), c.Type))
		src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES %s", src.Table(c.Table()), c.Insert()))
	}
	return src
}
