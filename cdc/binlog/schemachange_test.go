package binlog

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestRun_SchemaChangeStops: a schema change of a captured table stops
// the run (schema changes are not followed), whatever form the statement
// takes; a TRUNCATE is applied. Between two runs a column is converted to
// latin1, a row written, and the column converted back to utf8mb4, so the
// next run's probe sees utf8mb4 only while the row's binlog event carries
// latin1 bytes. MariaDB's ALTER IGNORE and a leading comment were not
// recognised as an ALTER: the run went on and landed latin1 'Ã©' (C3 A9)
// as 'é', exit 0; MariaDB's CREATE OR REPLACE TABLE emptied the source and
// the replica kept its rows, exit 0; a TRUNCATE after a comment was not
// applied (attack s15).
func TestRun_SchemaChangeStops(t *testing.T) {
	ctx := routestest.Context(t, 3*time.Minute)
	src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, "postgres")
	const latin1, back = " MODIFY v VARCHAR(20) CHARACTER SET latin1", " MODIFY v VARCHAR(20) CHARACTER SET utf8mb4"
	for _, c := range []struct {
		name  string
		stmts []string // %[1]s: the table; row 2 = 'Ã©' is inserted after the first
		want  string   // the replica's rows after a run that must succeed; "" = the run must stop
	}{
		{"plain", []string{"ALTER TABLE %[1]s" + latin1, "ALTER TABLE %[1]s" + back}, ""},
		{"ignore", []string{"ALTER IGNORE TABLE %[1]s" + latin1, "ALTER IGNORE TABLE %[1]s" + back}, ""},
		{"comment", []string{"/* maintenance */ ALTER TABLE %[1]s" + latin1, "/* maintenance */ ALTER TABLE %[1]s" + back}, ""},
		{"line-comment", []string{"-- maintenance\nALTER TABLE %[1]s" + latin1, "-- maintenance\nALTER TABLE %[1]s" + back}, ""},
		{"if-exists", []string{"ALTER TABLE IF EXISTS %[1]s" + latin1, "ALTER TABLE IF EXISTS %[1]s" + back}, ""},
		{"create-or-replace", []string{"CREATE OR REPLACE TABLE %[1]s (id INT PRIMARY KEY, v VARCHAR(20) CHARACTER SET utf8mb4)"}, ""},
		{"truncate-comment", []string{"/* purge */ TRUNCATE TABLE %[1]s"}, "2=Ã©"},
		{"truncate-trailing-comment", []string{"TRUNCATE TABLE %[1]s /* purge */"}, "2=Ã©"},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := "sc_" + strings.ReplaceAll(c.name, "-", "_")
			src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, v VARCHAR(20) CHARACTER SET utf8mb4)", src.Table(name)))
			src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (1, 'a')", src.Table(name)))
			cfg := Config{SourceURL: src.URL, DestURL: dst.URL, Tables: []Pair{{Source: src.Ref(name), Dest: dst.Ref(name)}}}
			if _, err := Run(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			for i, q := range c.stmts {
				src.Exec(t, ctx, fmt.Sprintf(q, src.Table(name)))
				if i == 0 {
					src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (2, 'Ã©')", src.Table(name)))
				}
			}
			res, err := Run(ctx, cfg)
			got := dst.Query(t, ctx, "SELECT COALESCE(string_agg(id || '=' || v, ' ' ORDER BY id), 'none') FROM "+dst.Table(name))
			switch {
			case c.want != "" && err != nil:
				t.Fatalf("%s: run = %v", c.stmts[0], err)
			case c.want != "" && got != c.want:
				t.Errorf("%s: run exit 0, the replica holds %q; want %q (the source's rows)", c.stmts[0], got, c.want)
			case c.want == "" && err == nil:
				t.Errorf("%s: run exit 0 (%d changes), the replica holds %q (source: %q); want the run stopped at the schema change",
					c.stmts[0], res.Changes, got, src.Query(t, ctx, "SELECT COALESCE(GROUP_CONCAT(id, '=', v ORDER BY id SEPARATOR ' '), 'none') FROM "+src.Table(name)))
			case c.want == "" && !strings.Contains(err.Error(), "schema"):
				t.Errorf("run = %v; want it to say the schema changed", err)
			case c.want == "" && got != "1=a":
				t.Errorf("the replica holds %q after the refused run; want 1=a", got)
			}
		})
	}
}
