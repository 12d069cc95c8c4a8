package weir_test

import (
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestComposite_AllNullIsNotNull: a PostgreSQL composite whose fields are
// all NULL, ROW(NULL, NULL), is a value ("(,)"), not NULL — though
// `x IS NULL` is true of it. It lands as that value in PostgreSQL,
// MariaDB and Iceberg; a NULL composite stays NULL.
func TestComposite_AllNullIsNotNull(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql", "iceberg"} {
		t.Run(kind, func(t *testing.T) {
			ctx := routestest.Context(t, 2*time.Minute)
			src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, kind)
			src.Exec(t, ctx, "CREATE TYPE "+src.Schema+".pair AS (a int, b text)")
			src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" (id bigint PRIMARY KEY, c "+src.Schema+".pair)")
			src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+` VALUES (1, ROW(NULL, NULL)), (2, NULL), (3, ROW(1, 'x')), (4, ROW(NULL, '')), (5, ROW(0, NULL))`)
			if _, err := weir.Transfer(ctx, src.URL, dst.URL, weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestSchema: dst.Schema}); err != nil {
				t.Fatal(err)
			}
			got := strings.Join(dst.Rows(t, ctx, "t", []string{"id", "c"}), " ")
			want := `1|(,) 2|\N 3|(1,x) 4|(,"") 5|(0,)`
			if got != want {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		})
	}
}
