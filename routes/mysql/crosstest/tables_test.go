package crosstest

import (
	"context"
	"database/sql"
	"testing"

	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
)

// mysqlTypesDDL has every common MySQL type, TIME within a day (TIME past
// 24 h needs ?time=duration and lands as an interval).
const mysqlTypesDDL = `CREATE TABLE xt (
  id INT PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED,
  mi MEDIUMINT, miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
  d12 DECIMAL(12,2), d65 DECIMAL(65,30), d38 DECIMAL(38,0), d55 DECIMAL(5,5),
  f FLOAT, dbl DOUBLE, b1 BIT(1), b5 BIT(5), b64 BIT(64), bo BOOL,
  dt DATE, dtm DATETIME, dtm6 DATETIME(6), ts TIMESTAMP(6) NULL, tm TIME, tm6 TIME(6), yr YEAR,
  c CHAR(10), vc VARCHAR(100), tx TEXT, bn BINARY(4), vb VARBINARY(100), lbl LONGBLOB,
  en ENUM('a','b','ü'), st SET('x','y','z'), js JSON
) ENGINE=InnoDB`

var mysqlTypesRows = []string{
	`(1, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295,
  9223372036854775807, 18446744073709551615,
  9999999999.99, 99999999999999999999999999999999999.999999999999999999999999999999,
  99999999999999999999999999999999999999, 0.99999, 16777216, 1.7976931348623157e308,
  b'1', b'11111', b'1111111111111111111111111111111111111111111111111111111111111111', TRUE,
  '9999-12-31', '9999-12-31 23:59:59', '2024-02-29 12:34:56.789012', '2038-01-19 03:14:07.999999', '23:59:59', '12:00:00.000001', 2155,
  'ünïcødé', '日本語 ✓', 'tab\there\nnewline\\backslash', X'00090A5C', X'0D0A00', X'DEADBEEF',
  'ü', 'x,z', '{"a": 1, "b": [true, null]}')`,
	`(2, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0,
  -9999999999.99, -99999999999999999999999999999999999.999999999999999999999999999999,
  -99999999999999999999999999999999999999, -0.00001, -1.17549435e-38, -4.9e-324,
  b'0', b'0', b'0', FALSE,
  '1000-01-01', '1000-01-01 00:00:00', '1970-01-01 00:00:00.000001', '1970-01-01 00:00:01.000000', '00:00:00', '00:00:00', 1901,
  '', '', '', X'00000000', X'', X'',
  'a', '', '[]')`,
	`(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
}

// mysqlBlobRow: 4 MiB of every byte value, and text full of escapes.
const mysqlBlobRow = `INSERT INTO xt (id, lbl, tx)
SELECT 4, REPEAT(CONCAT(UNHEX('000102030405060708090A0B0C0D0E0F'), UNHEX(REPEAT('5C', 16)), UNHEX('090A0DFF')), 1 << 18), REPEAT('é\t\\N\n', 1000)`

var mysqlTypesCanon = []column{
	{"id", "id", "id"}, {"ti", "ti", "ti"}, {"tiu", "tiu", "tiu"}, {"si", "si", "si"}, {"siu", "siu", "siu"},
	{"mi", "mi", "mi"}, {"miu", "miu", "miu"}, {"i", "i", "i"}, {"iu", "iu", "iu"}, {"bi", "bi", "bi"}, {"biu", "biu", "biu"},
	{"d12", "d12", "d12"}, {"d65", "d65", "d65"}, {"d38", "d38", "d38"}, {"d55", "d55", "d55"},
	{"f", "CAST(f AS DOUBLE)", "replace(f::float8::text, 'e+', 'e')"}, {"dbl", "dbl", "replace(dbl::text, 'e+', 'e')"},
	{"b1", "b1+0", "CASE WHEN b1 THEN 1 WHEN NOT b1 THEN 0 END"}, {"b5", "b5+0", "b5"}, {"b64", "b64+0", "b64"},
	{"bo", "bo", "CASE WHEN bo THEN 1 WHEN NOT bo THEN 0 END"},
	{"dt", "DATE_FORMAT(dt, '%Y-%m-%d')", "to_char(dt, 'YYYY-MM-DD')"},
	{"dtm", "DATE_FORMAT(dtm, '%Y-%m-%d %H:%i:%s.%f')", "to_char(dtm, 'YYYY-MM-DD HH24:MI:SS.US')"},
	{"dtm6", "DATE_FORMAT(dtm6, '%Y-%m-%d %H:%i:%s.%f')", "to_char(dtm6, 'YYYY-MM-DD HH24:MI:SS.US')"},
	{"ts", "DATE_FORMAT(ts, '%Y-%m-%d %H:%i:%s.%f')", "to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')"},
	{"tm", "TIME_FORMAT(tm, '%H:%i:%s.%f')", "to_char(tm, 'HH24:MI:SS.US')"},
	{"tm6", "TIME_FORMAT(tm6, '%H:%i:%s.%f')", "to_char(tm6, 'HH24:MI:SS.US')"},
	{"yr", "yr", "yr"}, {"c", "c", "c"}, {"vc", "vc", "vc"}, {"tx", "tx", "tx"},
	{"bn", "HEX(bn)", "upper(encode(bn, 'hex'))"}, {"vb", "HEX(vb)", "upper(encode(vb, 'hex'))"},
	{"lbl", "MD5(lbl)", "md5(lbl)"}, {"en", "en", "en"}, {"st", "st", "st"}, {"js", "js", "js"},
}

// pgTypesDDL has the common PostgreSQL types (%s: the table).
const pgTypesDDL = `CREATE TABLE %s (
  id bigint PRIMARY KEY, i2 smallint, i4 integer, i8 bigint,
  n12 numeric(12,2), n65 numeric(65,30), nb numeric, r real, d double precision,
  b boolean, t text, vc varchar(50), ch char(5), by bytea,
  dt date, tm time, tms time(3), ts timestamp, tstz timestamptz,
  u uuid, j json, jb jsonb, iv interval, ai integer[], at text[])`

var pgTypesRows = []string{
	`(1, 32767, 2147483647, 9223372036854775807, 9999999999.99,
  99999999999999999999999999999999999.999999999999999999999999999999, 123.456, 3.4028235e38, 1.7976931348623157e308,
  true, E'ünïcødé ✓ tab\t nl\n bs\\ ''q''', 'x', 'ab', '\x00ff5c090a',
  '9999-12-31', '23:59:59.999999', '12:00:00.5', '9999-12-31 23:59:59.999999', '2024-06-01 12:00:00.123456+02',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"b":1,  "a":[1,2]}', '{"b":1,  "a":[1,2]}',
  '1 year 2 mons 3 days 04:05:06.5', '{1,NULL,3}', '{"a","b c"}')`,
	`(2, -32768, -2147483648, -9223372036854775808, -9999999999.99,
  -99999999999999999999999999999999999.999999999999999999999999999999, -0.000000001, -1.5, -2.5e-300,
  false, '', '', '', '\x',
  '1000-01-01', '00:00:00', '00:00:00', '1970-01-01 00:00:00', '1970-01-01 00:00:00+00',
  '00000000-0000-0000-0000-000000000000', '[]', '{}', '-1 days +02:00:00', '{}', '{}')`,
	`(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
}

// pgBlobRow: 4 MiB of every byte value.
const pgBlobRow = `INSERT INTO %s (id, by, t) SELECT 4, decode(repeat('000102030405060708090a0b0c0d0e0f5c5c5c5c090a0dff', 1 << 18), 'hex'), repeat(E'é\t\\N\n', 1000)`

var pgTypesCanon = []column{
	{"id", "id", "id"}, {"i2", "i2", "i2"}, {"i4", "i4", "i4"}, {"i8", "i8", "i8"},
	{"n12", "n12", "n12"}, {"n65", "n65", "n65"}, {"nb", "nb", "nb::numeric(65,30)"},
	{"r", "CAST(r AS DOUBLE)", "replace(r::float8::text, 'e+', 'e')"}, {"d", "d", "replace(d::text, 'e+', 'e')"},
	{"b", "b", "CASE WHEN b THEN 1 WHEN NOT b THEN 0 END"}, {"t", "t", "t"}, {"vc", "vc", "vc"}, {"ch", "ch", "ch"},
	{"by", "MD5(`by`)", "md5(by)"},
	{"dt", "DATE_FORMAT(dt, '%Y-%m-%d')", "to_char(dt, 'YYYY-MM-DD')"},
	{"tm", "TIME_FORMAT(tm, '%H:%i:%s.%f')", "to_char(tm, 'HH24:MI:SS.US')"},
	{"tms", "TIME_FORMAT(tms, '%H:%i:%s.%f')", "to_char(tms, 'HH24:MI:SS.US')"},
	{"ts", "DATE_FORMAT(ts, '%Y-%m-%d %H:%i:%s.%f')", "to_char(ts, 'YYYY-MM-DD HH24:MI:SS.US')"},
	{"tstz", "DATE_FORMAT(tstz, '%Y-%m-%d %H:%i:%s.%f')", "to_char(tstz AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')"},
	{"u", "u", "u"}, {"j", "j", "j"}, {"jb", "jb", "jb"}, {"iv", "iv", "iv"},
	{"ai", "ai", "array_to_json(ai)"}, {"at", "at", "array_to_json(at)"},
}

func mysqlColumn(t *testing.T, ctx context.Context, conn *sql.Conn, q string) []string {
	t.Helper()
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func pgColumn(t *testing.T, ctx context.Context, pg *postgrestest.Fixture, q string) []string {
	t.Helper()
	rows, err := pg.Pool.Query(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func mysqlColumnTypes(t *testing.T, ctx context.Context, my *mysqltest.Fixture, table string) []string {
	t.Helper()
	rows, err := my.DB.QueryContext(ctx, "SELECT CONCAT(COLUMN_NAME, ' ', COLUMN_TYPE) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION", my.Database, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		out = append(out, s)
	}
	return out
}
