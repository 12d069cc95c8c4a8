//go:build attack

package weir_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// TestVarlenAttack_AppendCost times a 1M-row append of text into a
// user's varchar(100) (the length check's extra scan of the staging
// table); run it on this commit and on 2d2b2d8's routes to compare.
func TestVarlenAttack_AppendCost(t *testing.T) {
	ctx := routestest.Context(t, 10*time.Minute)
	src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "postgres")
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" (id bigint PRIMARY KEY, v text)")
	src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" SELECT g, 'value number ' || g FROM generate_series(1, 1000000) g")
	dst.Exec(t, ctx, "CREATE TABLE "+dst.Table("t")+" (id bigint PRIMARY KEY, v varchar(100))")
	opts := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestSchema: dst.Schema, Mode: routes.ModeAppend, Cursor: "id"}
	start := time.Now()
	if _, err := weir.Transfer(ctx, src.URL, dst.URL, opts); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	if n := dst.Query(t, ctx, "SELECT count(*) FROM "+dst.Table("t")); n != "1000000" {
		t.Fatalf("%s rows", n)
	}
	fmt.Printf("append of 1M rows into varchar(100): %v\n", el)
}
