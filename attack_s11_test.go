package weir_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// TestAttackS11_MySQLColumnFolding: routes.CheckColumnNames folds MySQL
// column names with Go's strings.ToLower (current Unicode), MariaDB with
// its own older case table. Pairs MariaDB holds as two columns (checked
// by hand: CREATE TABLE t (`ẞ` int, `ß` int) succeeds, as do Ա/ա-like
// newer pairs Ა/ა, Ꭰ/ꭰ, ϴ/θ, Ⱥ/ⱥ) are refused as bad input (exit 2), a
// table the destination can hold.
func TestAttackS11_MySQLColumnFolding(t *testing.T) {
	for _, cols := range []string{`"ẞ" text, "ß" text`, `"Ა" text, "ა" text`, `"ϴ" text, "θ" text`} {
		t.Run(cols, func(t *testing.T) {
			ctx := routestest.Context(t, 2*time.Minute)
			src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "mysql")
			src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" (id bigint PRIMARY KEY, "+cols+")")
			src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" (id) VALUES (1), (2)")
			opts := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestTable: dst.Schema + ".t", Mode: routes.ModeReplace}
			if _, err := weir.Transfer(ctx, src.URL, dst.URL, opts); err != nil {
				t.Fatalf("MariaDB holds these as two columns, yet: %v", err)
			}
		})
	}
}

// TestAttackS11_MySQLColumnOutsideBMP: MariaDB's identifiers are utf8mb3,
// so a column named with a character outside the BMP ("😀", fine in
// PostgreSQL) cannot land as named: the server answers "Invalid utf8mb4
// character string" naming neither table nor column. CheckColumnNames
// should refuse it as bad input (exit 2) naming the column, before
// anything is created, like a name past 64 characters.
func TestAttackS11_MySQLColumnOutsideBMP(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "mysql")
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+` (id bigint PRIMARY KEY, "v😀" text)`)
	src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" (id) VALUES (1), (2)")
	opts := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestTable: dst.Schema + ".t", Mode: routes.ModeReplace}
	_, err := weir.Transfer(ctx, src.URL, dst.URL, opts)
	if hit := cdctest.Failed(err, src.Schema+".t"); hit == nil || !errors.Is(hit, routes.ErrBadInput) || !strings.Contains(hit.Error(), "v😀") {
		t.Fatalf("got %v, want bad input (exit 2) naming column \"v😀\"", err)
	}
	if n := dst.Query(t, ctx, tablesIn(dst)); n != "0" {
		t.Fatalf("refused, yet %s tables were created in %s", n, dst.Schema)
	}
}
