package faults_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/clickhouse/clickhousetest"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestFault_BadInput: every mistake ends with exit 2 and one line that
// names the problem, before a row moves (the destination table is never
// created), and never prints the password.
func TestFault_BadInput(t *testing.T) {
	t.Parallel()
	src, dst := newPG(t), newPG(t)
	my := mysqltest.New(t)
	ch := clickhousetest.New(t)
	ctx := routestest.Context(t, 4*time.Minute)
	pg := src.URL()
	withPW := strings.Replace(pg, "://root@", "://root:"+password+"@", 1)
	myPW := strings.Replace(my.URL(), "://root@", "://root:"+password+"@", 1)
	tbl := routestest.Name("b")
	src.Create(t, ctx, tbl, routestest.Rows(1, 100))
	src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s AS SELECT * FROM %s", src.Ref(tbl+"_nokey"), src.Ref(tbl)))
	// A cursor that went backwards: the saved watermark is 100, then the
	// source loses its top rows.
	mustWeir(ctx, t, "transfer", pg, dst.URL(), "--table", src.Ref(tbl), "--dest-table", dst.Ref(tbl+"_wm"), "--mode", "append")
	src.Exec(t, ctx, fmt.Sprintf("DELETE FROM %s WHERE id > 60", src.Ref(tbl)))
	// A destination column whose type cannot take the source's (text
	// into Array(String)).
	ch.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id Int64, name Array(String)) ENGINE = MergeTree ORDER BY id", ch.Ref("arr")))
	src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s AS SELECT id, name FROM %s", src.Ref(tbl+"_text"), src.Ref(tbl)),
		fmt.Sprintf("ALTER TABLE %s ADD PRIMARY KEY (id)", src.Ref(tbl+"_text")))
	// A merge key the source repeats (k = 3 twice).
	src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id bigint PRIMARY KEY, k int NOT NULL)", src.Ref(tbl+"_dup")),
		fmt.Sprintf("INSERT INTO %s SELECT g, g FROM generate_series(1, 50) g", src.Ref(tbl+"_dup")),
		fmt.Sprintf("INSERT INTO %s VALUES (51, 3)", src.Ref(tbl+"_dup")))
	dir := t.TempDir()
	badYAML := filepath.Join(dir, "weir.yaml")
	if err := os.WriteFile(badYAML, []byte("version: 1\ntasks:\n  a: {transfer: {from: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	transfer := func(from, table, dest string, extra ...string) []string {
		return append([]string{"transfer", from, dst.URL(), "--table", table, "--dest-table", dst.Ref(dest)}, extra...)
	}
	tests := []struct {
		name string
		args []string
		want string // in the error line
		dest string // a destination table that must not exist after
	}{
		{"unknown scheme", []string{"transfer", "oracle://u:" + password + "@h/db", dst.URL(), "--table", "a.b"}, `unknown scheme "oracle"`, ""},
		{"bad URL", []string{"transfer", "postgres://u:" + password + "@h:port/db", dst.URL(), "--table", "a.b"}, "cannot parse URL", ""},
		{"wrong password", transfer(myPW, my.Ref("t"), "pw"), "check the user, password", "pw"},
		{"unknown user", transfer(strings.Replace(withPW, "://root:", "://nobody_weir:", 1), src.Ref(tbl), "user"), "check the user, password", "user"},
		{"unknown table", transfer(pg, src.Ref("nope"), "t1"), "no such table", "t1"},
		{"unknown schema", transfer(pg, "nope_schema_weir."+tbl, "t2"), "no such table", "t2"},
		{"unsupported type", []string{"transfer", pg, ch.URL(), "--table", src.Ref(tbl + "_text"), "--dest-table", ch.Ref("arr"), "--mode", "append"},
			"cannot write arrow utf8 as ClickHouse Array(String)", ""},
		{"merge without a primary key", transfer(pg, src.Ref(tbl+"_nokey"), "t4", "--mode", "merge"), "no single-column primary key", "t4"},
		{"cursor went backwards", transfer(pg, src.Ref(tbl), tbl+"_wm", "--mode", "append"), "cursor went backwards", ""},
		{"unknown cursor column", transfer(pg, src.Ref(tbl), "t5", "--mode", "append", "--cursor", "nope"), "nope", "t5"},
		{"unknown mode", transfer(pg, src.Ref(tbl), "t6", "--mode", "upsert"), "upsert", "t6"},
		{"a cursor with NULLs", transfer(pg, src.Ref(tbl), "t9", "--mode", "append", "--cursor", "ts"), "10 rows have a NULL cursor", "t9"},
		{"a merge key the source repeats", transfer(pg, src.Ref(tbl+"_dup"), "t10", "--mode", "merge", "--cursor", "id", "--primary-key", "k"),
			"more than one row with key (k) = (3)", "t10"},
		{"bad destination option", []string{"transfer", pg, "file://" + dir + "/out?lease=soon", "--table", src.Ref(tbl)}, "lease", ""},
		{"no table", []string{"transfer", pg, dst.URL()}, "no table to transfer", ""},
		{"dagfile with bad YAML", []string{"once", "-f", badYAML, "--task", "a"}, "weir.yaml", ""},
		// log_based probes through its own capture (cdc/pgwal) first.
		{"log_based unknown table", transfer(pg, src.Ref("nope"), "t7", "--mode", "log_based"), "no such table", "t7"},
		{"log_based without a primary key", transfer(pg, src.Ref(tbl+"_nokey"), "t8", "--mode", "log_based"), "no primary key", "t8"},
		// What a destination cannot do never succeeds on a retry: exit 2.
		{"log_based into a destination that cannot apply changes", []string{"transfer", pg, "file://" + dir + "/cdc", "--table", src.Ref(tbl), "--mode", "log_based"},
			"the destination cannot apply changes", ""},
	}
	for _, tc := range tests {
		runCase(t, tc.name, func(t *testing.T) {
			r := weir(ctx, t, nil, tc.args...)
			if r.code != 2 {
				t.Fatalf("want exit 2, got %s", r)
			}
			var errs []string
			for _, l := range strings.Split(r.stderr, "\n") {
				if strings.HasPrefix(l, "weir:") {
					errs = append(errs, l)
				}
			}
			if len(errs) != 1 || !strings.Contains(errs[0], tc.want) {
				t.Errorf("want one error line saying %q, got:\n%s", tc.want, r.stderr)
			}
			if strings.Contains(r.stderr+r.stdout, password) {
				t.Errorf("the password is printed:\n%s", r.stderr)
			}
			if tc.dest != "" {
				if _, ok := dst.Read(t, ctx, tc.dest); ok {
					t.Errorf("the destination table %s was created", tc.dest)
				}
			}
		})
	}
	if n := ch.Value(t, ctx, "SELECT count() FROM "+ch.Ref("arr")); n != "0" {
		t.Errorf("the refused run wrote %s rows into ClickHouse", n)
	}
	// The cursor case must also leave its table as it was.
	if _, n := tableHash(t, ctx, dst, tbl+"_wm"); n != 100 {
		t.Errorf("the append table has %d rows after the refused run, want 100", n)
	}
}
