package runner

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes/postgres/postgrestest"
)

// TestAttackS16_UserTableNamedLikeQuarantine: the user has a table of their
// own named <sink>__quarantine before the model first runs. weir derives
// that name; it did not create the table, so it must neither replace nor
// append into it: the run refuses it, or the user's row is still there.
func TestAttackS16_UserTableNamedLikeQuarantine(t *testing.T) {
	for _, mode := range []string{"replace", "append"} {
		t.Run(mode, func(t *testing.T) {
			fx := postgrestest.New(t)
			ctx := testContext(t)
			fx.Exec(t, ctx, "CREATE TABLE "+fx.Schema+".src (id int PRIMARY KEY, a text)", "INSERT INTO "+fx.Schema+".src VALUES (1, '5'), (2, 'x')",
				"CREATE TABLE "+fx.Schema+".out__quarantine (id text, a text, _weir_reason text)", "INSERT INTO "+fx.Schema+".out__quarantine VALUES ('mine', 'mine', 'mine')")
			path := filepath.Join(t.TempDir(), "weir.yaml")
			contract := "{columns: [{name: a, type: int}]}"
			writeFile(t, path, strings.ReplaceAll("version: 1\nconnections:\n  pg: ${WEIR_TEST_PG}\ntasks:\n  m:\n    model: {source: pg:S.src, sink: pg:S.out, mode: "+mode+", sql: SELECT * FROM input}\n    contract: "+contract+"\n", "S.", fx.Schema+"."))
			r, err := Load(path, Options{Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			_, err = r.Once(ctx, "m")
			var mine string
			if qerr := fx.Pool.QueryRow(ctx, `SELECT COALESCE(string_agg(id, ',' ORDER BY id), '') FROM `+fx.Schema+`.out__quarantine`).Scan(&mine); qerr != nil {
				t.Fatalf("the user's table: %v (run: %v)", qerr, err)
			}
			t.Logf("run: %v; the user's out__quarantine holds ids %q", err, mine)
			if !strings.Contains(mine, "mine") {
				t.Errorf("the user's out__quarantine lost its row (holds %q), run err = %v", mine, err)
			}
			if err == nil && mine != "mine" {
				t.Errorf("exit 0 and weir wrote into the user's out__quarantine: ids %q", mine)
			}
		})
	}
}
