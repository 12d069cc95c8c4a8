package crosstest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestMerge_CompositeTextKeyFits: a merge from PostgreSQL on a (bigint,
// text) key failed at prepare with MySQL's error 1071 "key too long" (the
// text column alone took the index's 3072 bytes). The text now gets the
// bytes the bigint leaves: a value that fits merges, a longer one fails
// the run loudly and leaves the table as it was, never cut to fit.
func TestMerge_CompositeTextKeyFits(t *testing.T) {
	ctx := routestest.Context(t, 3*time.Minute)
	pg, my := postgrestest.New(t), mysqltest.New(t)
	src := pg.Ref("ck")
	pg.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id bigint, name text, v int, PRIMARY KEY (id, name))", src),
		fmt.Sprintf("INSERT INTO %s VALUES (1, 'a', 1), (1, 'b', 2), (2, repeat('é', 700), 3)", src))
	merge := func() error {
		return mergeTable(ctx, pg.URL(), my.URL(), src, my.Ref("ck"), []string{"id", "name"})
	}
	conn, err := my.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := merge(); err != nil {
		t.Fatalf("first merge: %v", err)
	}
	pg.Exec(t, ctx, fmt.Sprintf("UPDATE %s SET v = v + 10", src), fmt.Sprintf("INSERT INTO %s VALUES (3, 'c', 4)", src))
	if err := merge(); err != nil {
		t.Fatalf("second merge: %v", err)
	}
	const want = "1|a|11,1|b|12,2|700|13,3|c|4"
	q := "SELECT GROUP_CONCAT(CONCAT_WS('|', id, IF(CHAR_LENGTH(name) > 1, CHAR_LENGTH(name), name), v) ORDER BY id, name) FROM " + my.Ref("ck")
	if got := mysqlColumn(t, ctx, conn, q); strings.Join(got, "") != want {
		t.Fatalf("merged rows = %v, want %s", got, want)
	}

	pg.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (4, repeat('x', 2000), 5)", src))
	if err := merge(); err == nil {
		t.Fatal("a key value longer than the index allows merged: it must fail, not be cut")
	}
	if got := mysqlColumn(t, ctx, conn, q); strings.Join(got, "") != want {
		t.Fatalf("after the refused merge rows = %v, want them unchanged: %s", got, want)
	}
}

func mergeTable(ctx context.Context, srcURL, dstURL, srcTable, dstTable string, key []string) error {
	src, err := routes.OpenSource(ctx, srcURL)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := routes.OpenDestination(ctx, dstURL)
	if err != nil {
		return err
	}
	defer dst.Close()
	st, _ := routes.ParseTableRef(srcTable)
	dt, _ := routes.ParseTableRef(dstTable)
	_, err = routes.Copy(ctx, src, dst, routes.CopySpec{Table: st, DestTable: dt, Mode: routes.ModeMerge, Key: key})
	return err
}
