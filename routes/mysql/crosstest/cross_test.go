package crosstest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
	_ "github.com/weirhq/weir/routes/mysql"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	_ "github.com/weirhq/weir/routes/postgres"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// The conformance cells of the two pairs this route adds to the matrix.

func TestRunCell_MySQLToPostgres(t *testing.T) {
	routestest.RunCell(t, mysqltest.New(t), postgrestest.New(t), routestest.Caps{Append: true, Merge: true}, mysqltest.Transfer)
}

func TestRunCell_PostgresToMySQL(t *testing.T) {
	routestest.RunCell(t, postgrestest.New(t), mysqltest.New(t), routestest.Caps{Append: true, Merge: true}, mysqltest.Transfer)
}

// column is one column of a cross-type table and its canonical text in SQL
// on each server: the values must render the same on both ends.
type column struct {
	name, mysql, pg string
}

func TestTypes_MySQLToPostgres(t *testing.T) {
	ctx := routestest.Context(t, 3*time.Minute)
	my, pg := mysqltest.New(t), postgrestest.New(t)
	my.Exec(t, ctx, mysqlTypesDDL, "INSERT INTO xt VALUES "+strings.Join(mysqlTypesRows, ", "), mysqlBlobRow)
	res := copyTable(t, ctx, my.URL(), pg.URL(), my.Ref("xt"), pg.Ref("xt"))
	if res.Rows != 4 {
		t.Errorf("copied %d rows, want 4", res.Rows)
	}
	compare(t, ctx, my, pg, "xt", mysqlTypesCanon)
}

func TestTypes_PostgresToMySQL(t *testing.T) {
	ctx := routestest.Context(t, 3*time.Minute)
	pg, my := postgrestest.New(t), mysqltest.New(t)
	pg.Exec(t, ctx, fmt.Sprintf(pgTypesDDL, pg.Ref("pt")), fmt.Sprintf("INSERT INTO %s VALUES %s", pg.Ref("pt"), strings.Join(pgTypesRows, ", ")),
		fmt.Sprintf(pgBlobRow, pg.Ref("pt")))
	res := copyTable(t, ctx, pg.URL(), my.URL(), pg.Ref("pt"), my.Ref("pt"))
	if res.Rows != 4 {
		t.Errorf("copied %d rows, want 4", res.Rows)
	}
	compare(t, ctx, my, pg, "pt", pgTypesCanon)
	t.Logf("MySQL column types: %s", strings.Join(mysqlColumnTypes(t, ctx, my, "pt"), ", "))
}

func copyTable(t *testing.T, ctx context.Context, srcURL, dstURL, srcTable, dstTable string) routes.CopyResult {
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
	st, _ := routes.ParseTableRef(srcTable)
	dt, _ := routes.ParseTableRef(dstTable)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	res, err := routes.Copy(ctx, src, dst, routes.CopySpec{Table: st, DestTable: dt, Budget: routes.Budget{Parallel: 2, ChunkBytes: 1 << 20}, Allocator: mem})
	if err != nil {
		t.Fatalf("copy %s → %s: %v", srcTable, dstTable, err)
	}
	return res
}

// compare checks the ordered md5 of every row's canonical text, computed
// in SQL on each server, and shows the differing columns when it differs.
func compare(t *testing.T, ctx context.Context, my *mysqltest.Fixture, pg *postgrestest.Fixture, table string, cols []column) {
	t.Helper()
	myRow, pgRow := make([]string, len(cols)), make([]string, len(cols))
	for i, c := range cols {
		myRow[i] = fmt.Sprintf("COALESCE(CAST(%s AS CHAR CHARACTER SET utf8mb4), 'NULL')", c.mysql)
		pgRow[i] = fmt.Sprintf("COALESCE((%s)::text, 'NULL')", c.pg)
	}
	myText := "CONCAT_WS('|', " + strings.Join(myRow, ", ") + ")"
	pgText := "concat_ws('|', " + strings.Join(pgRow, ", ") + ")"
	var myHash, pgHash string
	conn, err := my.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.ExecContext(ctx, "SET SESSION group_concat_max_len = 1073741824")
	if err := conn.QueryRowContext(ctx, fmt.Sprintf("SELECT MD5(GROUP_CONCAT(%s ORDER BY id SEPARATOR '\\n')) FROM %s", myText, my.Ref(table))).Scan(&myHash); err != nil {
		t.Fatalf("mysql hash: %v", err)
	}
	if err := pg.Pool.QueryRow(ctx, fmt.Sprintf("SELECT md5(string_agg(%s, E'\\n' ORDER BY id)) FROM %s", pgText, pg.Ref(table))).Scan(&pgHash); err != nil {
		t.Fatalf("postgres hash: %v", err)
	}
	if myHash == pgHash {
		return
	}
	t.Errorf("%s: canonical md5 differs: mysql %s, postgres %s", table, myHash, pgHash)
	for i, c := range cols {
		a := mysqlColumn(t, ctx, conn, fmt.Sprintf("SELECT %s FROM %s ORDER BY id", myRow[i], my.Ref(table)))
		b := pgColumn(t, ctx, pg, fmt.Sprintf("SELECT %s FROM %s ORDER BY id", pgRow[i], pg.Ref(table)))
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("column %s:\n mysql    %.200q\n postgres %.200q", c.name, a, b)
		}
	}
}
