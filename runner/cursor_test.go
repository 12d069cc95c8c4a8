package runner

import (
	"errors"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
)

const cursorYAML = `version: 1
connections:
  pg: ${WEIR_TEST_PG}
tasks:
  silver_events:
    model:
      source: pg:S.app_events
      sink: pg:S.silver_events
      mode: upsert
      key: [account, seq]
      cursor: updated_at
      sql: SELECT account, seq, amount, updated_at FROM input
  no_cursor:
    model: {source: pg:S.app_events, sink: pg:S.no_cursor, sql: SELECT * FROM input}
`

// TestRunner_ModelCursorPostgres: a model over a table with a composite
// primary key reads it by its cursor: column (a timestamp): each run reads
// the rows inserted or updated since the last, and the upsert sink ends
// equal to the table. Without cursor: the run fails at probe time.
func TestRunner_ModelCursorPostgres(t *testing.T) {
	d := newPGDAG(t, cursorYAML)
	ctx := testContext(t)
	ev := d.s + ".app_events"
	d.fx.Exec(t, ctx,
		"CREATE TABLE "+ev+" (account text, seq int4, amount numeric(12,2), updated_at timestamptz NOT NULL, PRIMARY KEY (account, seq))",
		"INSERT INTO "+ev+" VALUES ('a', 1, 10, '2024-05-01 10:00:00+00'), ('a', 2, 20, '2024-05-01 10:00:01+00'), ('b', 1, 30, '2024-05-01 10:00:02+00')")
	r := d.runner(t)
	rep := once(t, r, "silver_events")
	if off := rep.Offsets["input"]; rep.RowsIn != 3 || off.From != "" || off.To != "2024-05-01 10:00:02.000000+00" {
		t.Fatalf("first run: %+v (offsets %+v)", rep, rep.Offsets["input"])
	}
	steps := []struct {
		name string
		sql  string
		rows int64
	}{
		{"inserts", "INSERT INTO " + ev + " VALUES ('b', 2, 40, '2024-05-01 10:00:03+00'), ('c', 1, 50, '2024-05-01 10:00:04+00')", 2},
		{"an update moves its row past the offset", "UPDATE " + ev + " SET amount = 11, updated_at = '2024-05-01 10:00:05+00' WHERE account = 'a' AND seq = 1", 1},
		{"nothing new", "SELECT 1", 0},
	}
	for _, st := range steps {
		d.fx.Exec(t, ctx, st.sql)
		rep := once(t, r, "silver_events")
		if rep.RowsIn != st.rows || rep.NothingNew != (st.rows == 0) {
			t.Fatalf("%s: read %d rows, want %d: %+v", st.name, rep.RowsIn, st.rows, rep)
		}
	}
	if got, want := d.hash(t, "silver_events", "account, seq"), d.hash(t, "app_events", "account, seq"); got != want {
		t.Errorf("silver_events %s differs from app_events %s", got, want)
	}
	_, err := r.Once(ctx, "no_cursor")
	var pe *routes.ProbeError
	if !errors.As(err, &pe) || !strings.Contains(pe.Hint, "cursor:") {
		t.Fatalf("a model over a table with no integer key and no cursor: %v", err)
	}
}

// TestRunner_ModelNullCursorRefused: an upsert model over a table whose
// nullable cursor holds NULLs is refused as bad input naming the column
// and the count, before its sink exists (those rows are past no offset: a
// batch would never read them; it read 2 of 3 rows and committed). Once
// the NULL is filled, the model runs and reads every row.
func TestRunner_ModelNullCursorRefused(t *testing.T) {
	d := newPGDAG(t, cursorYAML)
	ctx := testContext(t)
	ev := d.s + ".app_events"
	d.fx.Exec(t, ctx,
		"CREATE TABLE "+ev+" (account text, seq int4, amount numeric(12,2), updated_at timestamptz, PRIMARY KEY (account, seq))",
		"INSERT INTO "+ev+" VALUES ('a', 1, 10, '2024-05-01 10:00:00+00'), ('a', 2, 20, NULL), ('b', 1, 30, '2024-05-01 10:00:02+00')")
	r := d.runner(t)
	_, err := r.Once(ctx, "silver_events")
	var pe *routes.ProbeError
	if !errors.As(err, &pe) || pe.Column != "updated_at" || !strings.Contains(err.Error(), "1 rows have a NULL cursor") {
		t.Fatalf("upsert model over a cursor with a NULL: %v; want bad input naming updated_at and the row", err)
	}
	d.fx.Exec(t, ctx, "UPDATE "+ev+" SET updated_at = '2024-05-01 10:00:01+00' WHERE updated_at IS NULL")
	if rep := once(t, r, "silver_events"); rep.RowsIn != 3 {
		t.Fatalf("after the NULL is filled: read %d rows, want 3: %+v", rep.RowsIn, rep)
	}
}
