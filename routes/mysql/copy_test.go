package mysql

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/routestest"
)

// canonical renders every column of the types table as text in SQL, the
// same way on both ends of a MySQL→MySQL copy.
var canonical = []string{
	"id", "ti", "tiu", "si", "siu", "mi", "miu", "i", "iu", "bi", "biu",
	"d12", "d65", "d38", "d55", "CAST(f AS DOUBLE)", "dbl",
	"b1+0", "b5+0", "b64+0", "bo", "dt", "dtm", "dtm6", "ts", "tm", "tm6", "yr",
	"c", "vc", "tx", "ltx", "HEX(bn)", "HEX(vb)", "HEX(bl)", "MD5(lbl)", "en", "st", "js",
}

// bigBlobRow adds a 4 MiB blob with every byte value (tabs, newlines,
// backslashes, NUL) to the types table.
const bigBlobRow = `INSERT INTO types (id, lbl, tx)
SELECT 4, REPEAT(CONCAT(UNHEX('000102030405060708090A0B0C0D0E0F'), UNHEX(REPEAT('5C', 16)), UNHEX('09'), UNHEX('0A'), UNHEX('0D'), UNHEX('FF')), 1 << 18), REPEAT('é\t\\N', 1000)`

func TestCopy_MySQLToMySQLTypes(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := mysqltest.New(t), mysqltest.New(t)
	createTypes(t, ctx, src)
	src.Exec(t, ctx, bigBlobRow)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	spec := routes.CopySpec{Table: ref(src, "types"), DestTable: ref(dst, "types"), Budget: routes.Budget{Parallel: 2, ChunkBytes: 1 << 20}, Allocator: mem}
	res := copyTable(t, ctx, fixtureURL(src, "time=duration"), dst.URL(), spec)
	mem.AssertSize(t, 0)
	if res.Rows != 4 {
		t.Errorf("copied %d rows, want 4", res.Rows)
	}
	expectSameRows(t, ctx, src, dst, "types", canonical)
	if got := queryStrings(t, ctx, dst, "SELECT COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'types' ORDER BY ORDINAL_POSITION", dst.Database); len(got) != len(wantArrow) || got[12] != "decimal(65,30)" || got[10] != "bigint(20) unsigned" {
		t.Errorf("destination column types %v", got)
	}
}

// TestCopy_ParallelRanges: a 300k-row table splits into key ranges (an
// unsigned bigint key near 2^64 included) that cover each row once.
func TestCopy_ParallelRanges(t *testing.T) {
	ctx := routestest.Context(t, 3*time.Minute)
	src, dst := mysqltest.New(t), mysqltest.New(t)
	src.Exec(t, ctx, "CREATE TABLE wide (id BIGINT UNSIGNED PRIMARY KEY, v VARCHAR(20), d DECIMAL(20,4))",
		"INSERT INTO wide SELECT 18446744073709251615 + seq, CONCAT('row ', seq), seq / 7 FROM seq_1_to_300000",
		"ANALYZE TABLE wide")
	e := openEndpoint(t, src, "")
	info, err := e.Probe(ctx, ref(src, "wide"))
	if err != nil {
		t.Fatal(err)
	}
	ranges, err := e.Plan(ctx, info, routes.PlanOptions{Pipes: 4})
	if err != nil || len(ranges) < 3 {
		t.Fatalf("plan of %d estimated rows: %d ranges, %v", info.RowEstimate, len(ranges), err)
	}
	spec := routes.CopySpec{Table: ref(src, "wide"), DestTable: ref(dst, "wide"), Budget: routes.Budget{Parallel: 4, ChunkBytes: 256 << 10}}
	res := copyTable(t, ctx, src.URL(), dst.URL(), spec)
	if res.Rows != 300000 || res.Pipes < 3 {
		t.Errorf("copied %d rows in %d pipes", res.Rows, res.Pipes)
	}
	expectSameRows(t, ctx, src, dst, "wide", []string{"id", "v", "d"})
}

func copyTable(t *testing.T, ctx context.Context, srcURL, dstURL string, spec routes.CopySpec) routes.CopyResult {
	t.Helper()
	src, err := routes.OpenSource(ctx, srcURL)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := routes.OpenDestination(ctx, dstURL)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	res, err := routes.Copy(ctx, src, dst, spec)
	if err != nil {
		t.Fatalf("copy: %v", err)
	}
	return res
}

// expectSameRows compares an ordered MD5 over every row's canonical text
// on both servers, then, when they differ, the rows themselves.
func expectSameRows(t *testing.T, ctx context.Context, src, dst *mysqltest.Fixture, table string, cols []string) {
	t.Helper()
	h1, n1 := src.Hash(t, ctx, src.Ref(table), "id", cols...)
	h2, n2 := dst.Hash(t, ctx, dst.Ref(table), "id", cols...)
	if h1 == h2 && n1 == n2 {
		return
	}
	t.Errorf("%s: source md5 %s (%d rows), destination md5 %s (%d rows)", table, h1, n1, h2, n2)
	q := "SELECT CONCAT_WS('|', " + strings.Join(nullable(cols), ", ") + ") FROM %s ORDER BY id LIMIT 5"
	a := queryStrings(t, ctx, src, strings.Replace(q, "%s", src.Ref(table), 1))
	b := queryStrings(t, ctx, dst, strings.Replace(q, "%s", dst.Ref(table), 1))
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			t.Errorf("row %d:\n src %.300s\n dst %.300s", i, a[i], b[i])
		}
	}
}

func nullable(cols []string) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = "COALESCE(CAST(" + c + " AS CHAR CHARACTER SET utf8mb4), 'NULL')"
	}
	return out
}
