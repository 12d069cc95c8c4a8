package binlog

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// TestAttackS14_Tinyint1NotBool: a tinyint(1) holding 2 or -1 is refused
// by the bulk read (bad input naming the column, with ?tinyint1=int as
// the fix); through the binlog the same values landed as true (PostgreSQL
// t, MySQL 1) with exit 0 (attack-s14). The run must refuse them the way
// the bulk read does, and with ?tinyint1=int they land as themselves.
func TestAttackS14_Tinyint1NotBool(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql"} {
		for _, changelog := range []bool{false, true} {
			t.Run(kind+map[bool]string{true: "/changelog"}[changelog], func(t *testing.T) {
				ctx := routestest.Context(t, 2*time.Minute)
				src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, kind)
				// one table per value: a refused change stays in the binlog
				for i, ins := range []string{"(2, 2)", "(3, -1)", "(4, 127)"} {
					name := fmt.Sprintf("tb%d", i)
					src.Exec(t, ctx, "CREATE TABLE "+src.Table(name)+" (id INT PRIMARY KEY, b TINYINT(1))")
					src.Exec(t, ctx, "INSERT INTO "+src.Table(name)+" VALUES (1, 1)")
					cfg := Config{SourceURL: src.URL, DestURL: dst.URL, Changelog: changelog, Tables: []Pair{{Source: src.Ref(name), Dest: dst.Ref(name)}}}
					if _, err := Run(ctx, cfg); err != nil {
						t.Fatal(err)
					}
					src.Exec(t, ctx, "INSERT INTO "+src.Table(name)+" VALUES "+ins)
					_, err := Run(ctx, cfg)
					var pe *routes.ProbeError
					if !errors.As(err, &pe) || !errors.Is(err, routes.ErrBadInput) || pe.Table != src.Ref(name).String() || !strings.Contains(pe.Hint, "tinyint1=int") {
						got := dst.Query(t, ctx, "SELECT COUNT(*) FROM "+dst.Table(name)+" WHERE id > 1 AND b")
						t.Fatalf("insert %s: run = %v (%s rows with id > 1 landed true), want the bulk read's refusal naming %s and ?tinyint1=int", ins, err, got, src.Ref(name))
					}
					t.Logf("insert %s: %v", ins, err)
				}
			})
		}
	}
}
