package clickhouse_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/clickhouse/clickhousetest"
	"github.com/weirhq/weir/routes/routestest"
)

// chTypesCreate holds every type 18.16 stores that weir reads and writes
// back as the very same type (so the Native relay applies).
const chTypesCreate = `CREATE TABLE %s (id Int64, i8 Int8, i16 Int16, i32 Int32, u8 UInt8, u16 UInt16, u32 UInt32, u64 UInt64,
  f32 Float32, f64 Float64, s String, ns Nullable(String), fs FixedString(4), d Date, dt DateTime, dtu DateTime('UTC'),
  d9 Decimal(9, 2), d18 Decimal(18, 4), d38 Decimal(38, 10), nd Nullable(Decimal(12, 2)), u UUID, ai Array(Int32),
  ans Array(Nullable(String)), aai Array(Array(UInt8))) ENGINE = MergeTree ORDER BY id`

const chTypesInsert = `INSERT INTO %s SELECT number, toInt8(number %% 256 - 128), toInt16(number - 32768), toInt32(number * 7919 - 2147483648),
  toUInt8(number %% 256), toUInt16(number %% 65536), toUInt32(number * 4093), 18446744073709551615 - number,
  number / 3, -number / 7, concat('ünï ✓ ', toString(number)), if(number %% 7 = 0, NULL, if(number %% 7 = 1, '', toString(number))),
  toFixedString(substring(toString(number), 1, 4), 4), toDate(number %% 49000), toDateTime(number * 9973), toDateTime(number * 13),
  toDecimal32(number / 100, 2), toDecimal64(-number / 10000, 4), toDecimal128(number, 10) * toDecimal128(1000000000000000, 0),
  if(number %% 5 = 0, NULL, toDecimal64(number / 100, 2)), generateUUIDv4(), range(number %% 5),
  arrayMap(x -> if(x %% 2 = 0, NULL, toString(x)), range(number %% 4)), [range(number %% 3), []]
  FROM numbers(%d)`

// tableHash is count and an order-independent hash of every value's text.
func tableHash(t *testing.T, ctx context.Context, f *clickhousetest.Fixture, table string) string {
	t.Helper()
	var cols []string
	for _, r := range f.Query(t, ctx, fmt.Sprintf("SELECT name FROM system.columns WHERE database = '%s' AND table = '%s'", f.DB, table)) {
		cols = append(cols, fmt.Sprintf("ifNull(toString(`%s`), '∅')", *r[0]))
	}
	q := fmt.Sprintf("SELECT concat(toString(count()), '/', toString(sum(cityHash64(arrayStringConcat([%s], '|'))))) FROM %s",
		strings.Join(cols, ", "), f.Ref(table))
	return f.Value(t, ctx, q)
}

func TestClickHouseToClickHouse_Relay(t *testing.T) {
	src, dst := clickhousetest.New(t), clickhousetest.New(t)
	ctx := routestest.Context(t, 3*time.Minute)
	const rows = 150_000
	src.Exec(t, ctx, fmt.Sprintf(chTypesCreate, src.Ref("types")), fmt.Sprintf(chTypesInsert, src.Ref("types"), rows))
	start := time.Now()
	want := tableHash(t, ctx, src, "types")
	t.Logf("hash of the source: %s", time.Since(start))
	tests := []struct {
		name   string
		srcURL string
		native bool
	}{
		{"relay", src.URL(), true},
		{"arrow_native_protocol", src.URL(), false},
		{"arrow_over_http", clickhousetest.NewHTTP(t).URL(), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := chSpec(src.Ref("types"), dst.Ref(tc.name))
			spec.NoPassthrough = !tc.native
			start := time.Now()
			res, err := copyURLs(ctx, tc.srcURL, dst.URL(), spec)
			t.Logf("copy: %s", time.Since(start))
			if err != nil {
				t.Fatal(err)
			}
			if res.Native != tc.native || res.Rows != rows || res.Pipes < 2 {
				t.Fatalf("native %v, %d rows over %d pipes; want native %v, %d rows over several", res.Native, res.Rows, res.Pipes, tc.native, rows)
			}
			if got := tableHash(t, ctx, dst, tc.name); got != want {
				t.Fatalf("destination hash %s, source %s", got, want)
			}
			if got, want := columnTypes(t, ctx, dst, tc.name), columnTypes(t, ctx, src, "types"); got != want {
				t.Fatalf("column types changed:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func columnTypes(t *testing.T, ctx context.Context, f *clickhousetest.Fixture, table string) string {
	var out []string
	for _, r := range f.Query(t, ctx, fmt.Sprintf("SELECT name, type FROM system.columns WHERE database = '%s' AND table = '%s'", f.DB, table)) {
		out = append(out, *r[0]+" "+*r[1])
	}
	return strings.Join(out, ", ")
}

func chSpec(src, dst string) routes.CopySpec {
	s, _ := routes.ParseTableRef(src)
	d, _ := routes.ParseTableRef(dst)
	return routes.CopySpec{Table: s, DestTable: d, Budget: routes.Budget{Parallel: 4, ChunkBytes: 256 << 10}}
}

// TestClickHouseToClickHouse_TextFallback: types without an Arrow
// counterpart are read as their text, so the relay is declined and the
// destination column is a String holding the same text.
func TestClickHouseToClickHouse_TextFallback(t *testing.T) {
	src, dst := clickhousetest.New(t), clickhousetest.New(t)
	ctx := routestest.Context(t, time.Minute)
	src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id Int64, e Enum8('a' = 1, 'b ✓' = 2), ne Nullable(Enum16('x' = 1000)), t Tuple(UInt8, String)) ENGINE = MergeTree ORDER BY id", src.Ref("fb")),
		fmt.Sprintf("INSERT INTO %s VALUES (1, 'a', 'x', (1, 'p')), (2, 'b ✓', NULL, (2, ''))", src.Ref("fb")))
	res, err := copyURLs(ctx, src.URL(), dst.URL(), chSpec(src.Ref("fb"), dst.Ref("fb")))
	if err != nil || res.Native || res.Rows != 2 {
		t.Fatalf("copy: %v, native %v, rows %d", err, res.Native, res.Rows)
	}
	// 18.16 cannot run toString on a NULL Nullable(Enum), so the source's
	// text is spelled out here.
	q := "SELECT toString(id), e, ifNull(ne, 'NULL'), t, toTypeName(e) FROM %s ORDER BY id"
	got := dst.Query(t, ctx, fmt.Sprintf(q, dst.Ref("fb")))
	want := [][]string{{"1", "a", "x", "(1,'p')"}, {"2", "b ✓", "NULL", "(2,'')"}}
	for i := range want {
		for c := 0; c < 4; c++ {
			if *got[i][c] != want[i][c] {
				t.Errorf("row %d col %d: %q, want %q", i, c, *got[i][c], want[i][c])
			}
		}
		if *got[i][4] != "String" {
			t.Errorf("enum landed as %s, want String", *got[i][4])
		}
	}
}
