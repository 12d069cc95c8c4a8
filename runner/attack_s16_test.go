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

// TestAttackS16_ModelIntoUserVarchar: a model's append into a user's
// sink table whose column is varchar(3) and "char": a longer value (its
// excess spaces, which PostgreSQL cuts without an error; a second byte,
// which "char" drops) is refused and the sink keeps its row; a value at
// the limit lands.
func TestAttackS16_ModelIntoUserVarchar(t *testing.T) {
	for _, c := range []struct{ name, typ, expr, want string }{
		{"varchar spaces", "varchar(3)", "'xyz  '", ""},
		{"varchar at the limit", "varchar(3)", "'é😀z'", "é😀z"},
		{"char1 two bytes", `"char"`, "'ab'", ""},
		{"name 64 bytes", "name", "repeat('n', 64)", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			fx := postgrestest.New(t)
			ctx := testContext(t)
			fx.Exec(t, ctx, "CREATE TABLE "+fx.Schema+".src (id int PRIMARY KEY)", "INSERT INTO "+fx.Schema+".src VALUES (1)",
				"CREATE TABLE "+fx.Schema+".out (id int, v "+c.typ+")", "INSERT INTO "+fx.Schema+".out VALUES (0, NULL)")
			path := filepath.Join(t.TempDir(), "weir.yaml")
			writeFile(t, path, strings.ReplaceAll("version: 1\nconnections:\n  pg: ${WEIR_TEST_PG}\ntasks:\n  m:\n    model: {source: pg:S.src, sink: pg:S.out, mode: append, sql: \"SELECT id, "+c.expr+" AS v FROM input\"}\n", "S.", fx.Schema+"."))
			r, err := Load(path, Options{Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			_, err = r.Once(ctx, "m")
			var got string
			if qerr := fx.Pool.QueryRow(ctx, `SELECT count(*)::text || ':' || COALESCE(max(v::text), '') FROM `+fx.Schema+`.out`).Scan(&got); qerr != nil {
				t.Fatal(qerr)
			}
			if c.want == "" {
				if err == nil || got != "1:" {
					t.Errorf("run err = %v, sink holds %q: want a refusal and the sink's one row", err, got)
				}
				return
			}
			if err != nil || got != "2:"+c.want {
				t.Errorf("run err = %v, sink holds %q, want 2:%s", err, got, c.want)
			}
		})
	}
}

// TestAttackS16_StreamUserTableNamedLikeQuarantine: a stream's bad events
// go to <sink>__quarantine; a user's table of that name, there before the
// stream first ran, must not take them (nor new columns).
func TestAttackS16_StreamUserTableNamedLikeQuarantine(t *testing.T) {
	fx := postgrestest.New(t)
	ctx := testContext(t)
	fx.Exec(t, ctx, "CREATE TABLE "+fx.Schema+".t__quarantine (note text)", "INSERT INTO "+fx.Schema+".t__quarantine VALUES ('mine')")
	f := newTruthFeed(t, &truthFeed{n: 4, closeAll: true, bad: map[int]string{3: `{"id":"x","seq":3}`}})
	path := filepath.Join(t.TempDir(), "weir.yaml")
	writeFile(t, path, strings.ReplaceAll(`version: 1
connections:
  pg: ${WEIR_TEST_PG}
tasks:
  t:
    stream: {source: "`+f.sseURL()+`", sink: pg:S.t, batch_interval: 300ms, cursor: seq}
    contract: {columns: [{name: id, type: int}, {name: seq, type: int}]}
`, "S.", fx.Schema+"."))
	r, err := Load(path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Once(ctx, "t")
	var n, cols string
	if qerr := fx.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM `+fx.Schema+`.t__quarantine)::text,
		(SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = $1 AND table_name = 't__quarantine')`, fx.Schema).Scan(&n, &cols); qerr != nil {
		t.Fatal(qerr)
	}
	t.Logf("run: %v; the user's t__quarantine: %s rows, columns %s", err, n, cols)
	if n != "1" || cols != "note" || err == nil {
		t.Errorf("weir wrote into the user's t__quarantine: %s rows, columns %s (run err %v)", n, cols, err)
	}
}
