package weir_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// Attack tests of session 13 (second round), by an outside tester: an
// append into a destination column the user changed to a type the
// lossy-cast rule did not compare (routes.KindOther, or a MariaDB double
// with a fixed scale). Each failed on main with exit 0 and a rounded
// value landed.

// TestAttackS13b_UserTypeHoldsOrRefuses: a PostgreSQL source column of
// type src is appended once (the destination is created), the user
// changes the destination's column to dest, a row with value lands in
// the source, and the next append must refuse with bad input naming the
// column (want "") or land the value as want.
func TestAttackS13b_UserTypeHoldsOrRefuses(t *testing.T) {
	cases := []struct {
		kind, name, src, dest, value, want string
	}{
		// money keeps two decimals: 1.2345 was stored as $1.23.
		{"postgres", "numeric into money", "numeric(10,4)", "money", "1.2345", ""},
		{"postgres", "numeric of the same scale into money", "numeric(10,2)", "money", "1.23", "$1.23"},
		// An array's elements go through their assignment cast: {1.5} was {2}.
		{"postgres", "numeric array into integer array", "numeric[]", "integer[]", "'{1.5}'", ""},
		{"postgres", "integer array into bigint array", "integer[]", "bigint[]", "'{7}'", "{7}"},
		// DOUBLE(M,D) rounds to D decimals: 1.2345 was stored as 1.23.
		{"mysql", "double into double(10,2)", "double precision", "double(10,2)", "1.2345", ""},
		{"mysql", "decimal into double(10,2)", "numeric(8,2)", "double(10,2)", "1.25", "1.25"},
	}
	for _, c := range cases {
		t.Run(c.kind+"/"+c.name, func(t *testing.T) {
			ctx := routestest.Context(t, 2*time.Minute)
			src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, c.kind)
			src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" (id bigint PRIMARY KEY, v "+c.src+")")
			src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" VALUES (1, NULL)")
			opts := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestSchema: dst.Schema, Mode: routes.ModeAppend, Cursor: "id"}
			if _, err := weir.Transfer(ctx, src.URL, dst.URL, opts); err != nil {
				t.Fatal(err)
			}
			if c.kind == "mysql" {
				dst.Exec(t, ctx, fmt.Sprintf("ALTER TABLE %s MODIFY COLUMN v %s", dst.Table("t"), c.dest))
			} else {
				dst.Exec(t, ctx, fmt.Sprintf("ALTER TABLE %s ALTER COLUMN v TYPE %s USING NULL", dst.Table("t"), c.dest))
			}
			src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" VALUES (2, "+c.value+")")
			before := driftRows(t, dst, ctx, "id", "v")
			_, err := weir.Transfer(ctx, src.URL, dst.URL, opts)
			if c.want == "" {
				if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "v") {
					t.Fatalf("%s into %s: err = %v, want bad input naming v; destination %s", c.src, c.dest, err, driftRows(t, dst, ctx, "id", "v"))
				}
				if after := driftRows(t, dst, ctx, "id", "v"); after != before {
					t.Fatalf("the refused run changed the destination: %s, was %s", after, before)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s into %s: %v", c.src, c.dest, err)
			}
			if got := driftRows(t, dst, ctx, "id", "v"); got != "1:NULL,2:"+c.want {
				t.Fatalf("%s into %s: destination %s, want 1:NULL,2:%s", c.src, c.dest, got, c.want)
			}
		})
	}
}
