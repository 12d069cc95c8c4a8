package runner

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
)

// TestContract_QuarantineNameAtTheLimit: a model's quarantine table is
// <sink>__quarantine; for a sink named at PostgreSQL's 63-byte limit the
// server cut that name back to the sink's own, so the quarantined rows and
// the sink's were one table. The quarantine's name is derived to fit
// (routes.SideName): the sink holds the good rows, a table of its own the
// bad one.
func TestContract_QuarantineNameAtTheLimit(t *testing.T) {
	for _, sink := range []string{strings.Repeat("q", 63), strings.Repeat("q", 50)} {
		t.Run(fmt.Sprintf("%d bytes", len(sink)), func(t *testing.T) {
			fx := postgrestest.New(t)
			ctx := testContext(t)
			fx.Exec(t, ctx, "CREATE TABLE "+fx.Schema+".src (id text, a text)", "INSERT INTO "+fx.Schema+".src VALUES ('1', '5'), ('2', 'x'), ('3', '7')")
			path := filepath.Join(t.TempDir(), "weir.yaml")
			contract := "{columns: [{name: id, type: int}, {name: a, type: int}]}"
			writeFile(t, path, strings.ReplaceAll("version: 1\nconnections:\n  pg: ${WEIR_TEST_PG}\ntasks:\n  m:\n    model: {source: pg:S.src, sink: pg:S."+sink+", mode: replace, sql: SELECT * FROM input}\n    contract: "+contract+"\n", "S.", fx.Schema+"."))
			r, err := Load(path, Options{Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			once(t, r, "m")
			var ids string
			if err := fx.Pool.QueryRow(ctx, `SELECT string_agg(id::text, ',' ORDER BY id) FROM `+fx.Schema+`."`+sink+`"`).Scan(&ids); err != nil {
				t.Fatal(err)
			}
			if ids != "1,3" {
				t.Errorf("sink %q holds ids %s, want 1,3", sink, ids)
			}
			var q string
			err = fx.Pool.QueryRow(ctx, `SELECT string_agg(table_name, ',') FROM information_schema.tables WHERE table_schema = $1 AND table_name LIKE '%quarantine'`, fx.Schema).Scan(&q)
			if err != nil || q == "" {
				t.Fatalf("no quarantine table beside %q (%v)", sink, err)
			}
			var bad string
			if err := fx.Pool.QueryRow(ctx, `SELECT string_agg(id, ',') FROM `+fx.Schema+`."`+q+`"`).Scan(&bad); err != nil {
				t.Fatal(err)
			}
			if bad != "2" {
				t.Errorf("quarantine %q holds ids %s, want 2", q, bad)
			}
		})
	}
}

// TestModel_SinkNameOverTheLimit: a model's sink named over PostgreSQL's
// 63-byte limit was cut by the server onto the table named by its first
// 63 bytes: a replace model dropped the user's table of that name and put
// its rows there, exit 0. The sink name is refused, bad input naming it,
// and the user's table keeps its row.
func TestModel_SinkNameOverTheLimit(t *testing.T) {
	user := strings.Repeat("s", 63)
	for _, mode := range []string{"replace", "append"} {
		t.Run(mode, func(t *testing.T) {
			fx := postgrestest.New(t)
			ctx := testContext(t)
			fx.Exec(t, ctx, "CREATE TABLE "+fx.Schema+".src (id int PRIMARY KEY, a text)", "INSERT INTO "+fx.Schema+".src VALUES (1, 'x')",
				"CREATE TABLE "+fx.Schema+`."`+user+`" (id int, a text)`, "INSERT INTO "+fx.Schema+`."`+user+`" VALUES (1000, 'mine')`)
			path := filepath.Join(t.TempDir(), "weir.yaml")
			writeFile(t, path, strings.ReplaceAll("version: 1\nconnections:\n  pg: ${WEIR_TEST_PG}\ntasks:\n  m:\n    model: {source: pg:S.src, sink: pg:S."+user+"_x, mode: "+mode+", sql: SELECT * FROM input}\n", "S.", fx.Schema+"."))
			r, err := Load(path, Options{Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			_, err = r.Once(ctx, "m")
			if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), user+"_x") {
				t.Errorf("once = %v, want bad input naming the sink", err)
			}
			var ids string
			if err := fx.Pool.QueryRow(ctx, `SELECT string_agg(id::text, ',') FROM `+fx.Schema+`."`+user+`"`).Scan(&ids); err != nil {
				t.Fatal(err)
			}
			if ids != "1000" {
				t.Errorf("the user's table holds ids %s, want its 1000", ids)
			}
		})
	}
}
