package githubapi_test

import (
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// --schema transfers the ten tables; in PostgreSQL the ids land as
// bigint, the times as timestamptz and raw as json.
func TestSchema_Postgres(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	s := peer(t)
	pg := postgrestest.New(t)
	rep, err := weir.Transfer(ctx, srcURL(s), pg.URL(), weir.TransferOptions{Schema: "widgets", DestSchema: pg.Schema, Mode: routes.ModeReplace})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tables) != 10 || rep.Rows != 5*4+6 {
		t.Fatalf("--schema moved %d tables, %d rows", len(rep.Tables), rep.Rows)
	}
	types := map[string]string{}
	rows, err := pg.Pool.Query(ctx, `SELECT table_name || '.' || column_name, data_type FROM information_schema.columns
WHERE table_schema = $1 AND (table_name, column_name) IN (('issues','id'), ('issues','updated_at'), ('issues','raw'), ('labels','default'), ('commits','sha'))`, pg.Schema)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c, ty string
		rows.Scan(&c, &ty)
		types[c] = ty
	}
	rows.Close()
	want := map[string]string{"issues.id": "bigint", "issues.updated_at": "timestamp with time zone", "issues.raw": "json", "labels.default": "boolean", "commits.sha": "text"}
	for c, ty := range want {
		if types[c] != ty {
			t.Errorf("%s is %q, want %q", c, types[c], ty)
		}
	}
	var login string
	if err := pg.Pool.QueryRow(ctx, `SELECT raw->'user'->>'login' FROM `+pg.Schema+`.issues WHERE id = 3`).Scan(&login); err != nil || login != "octo" {
		t.Errorf("raw JSON in PostgreSQL: %q %v", login, err)
	}
}
