package dagfile

import (
	"strings"
	"testing"
)

// TestTransferSinkDatabase: a transfer into MySQL or ClickHouse with no
// dest_table or schema writes in the connection URL's database
// (routes.DestRef), as far as it is known without the environment; other
// destinations keep the source's schema.
func TestTransferSinkDatabase(t *testing.T) {
	env := map[string]string{"PASS": "pw", "MY_URL": "mysql://u:pw@h:3306/fromenv", "DB": "x"}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	conns := map[string]string{
		"my":     "mysql://u:${PASS}@h:3306/shop",
		"myenv":  "${MY_URL}",
		"mydb":   "mysql://u@h:3306/${DB}",
		"mynodb": "mysql://u@h:3306",
		"ch":     "clickhouse://u:${PASS}@h:9000/analytics",
		"chnodb": "clickhouse+http://h:8123",
		"pg":     "postgres://u:${PASS}@h/db",
	}
	cases := []struct {
		to, extra      string
		static, loaded string // the sink with LoadStatic, and with the environment
	}{
		{"my", "", "my:shop.orders", "my:shop.orders"},
		{"myenv", "", "myenv:public.orders", "myenv:fromenv.orders"}, // scheme unknown without the environment
		{"mydb", "", "mydb:orders", "mydb:x.orders"},
		{"mynodb", "", "mynodb:orders", "mynodb:orders"}, // the run refuses it (exit 2)
		{"ch", "", "ch:analytics.orders", "ch:analytics.orders"},
		{"chnodb", "", "chnodb:default.orders", "chnodb:default.orders"},
		{"pg", "", "pg:public.orders", "pg:public.orders"},
		{"my", ", schema: stage", "my:stage.orders", "my:stage.orders"},
		{"my", ", dest_table: other.t", "my:other.t", "my:other.t"},
		{"ch", ", dest_table: t", "ch:t", "ch:t"},
	}
	for _, tc := range cases {
		var b strings.Builder
		b.WriteString("version: 1\nconnections:\n")
		for name, raw := range conns {
			b.WriteString("  " + name + ": \"" + raw + "\"\n")
		}
		b.WriteString("tasks:\n  t:\n    transfer: {from: pg, table: public.orders, to: " + tc.to + tc.extra + "}\n")
		for _, g := range []struct {
			name   string
			getenv Getenv
			want   string
		}{{"static", nil, tc.static}, {"loaded", getenv, tc.loaded}} {
			f, err := Parse([]byte(b.String()), "weir.yaml", g.getenv)
			if err != nil {
				t.Fatalf("%s%s: %v", tc.to, tc.extra, err)
			}
			if got := f.Tasks[0].Sinks()[0].String(); got != g.want {
				t.Errorf("%s%s (%s): sink %s, want %s", tc.to, tc.extra, g.name, got, g.want)
			}
		}
	}
}

// TestTransferGitHubSource: a github:// connection is a transfer's from:
// like any other, its tables object paths as a file:// connection's are;
// as a to: it is refused (it is a source only).
func TestTransferGitHubSource(t *testing.T) {
	const conns = "version: 1\nconnections:\n  gh: \"github://acme/data/csv?ref=v1&token=${GITHUB_TOKEN}\"\n  fs: \"file:///data\"\n  pg: \"postgres://u@h/db\"\n"
	for _, table := range []string{"in/orders.csv", "orders"} {
		f, err := Parse([]byte(conns+"tasks:\n  t:\n    transfer: {from: gh, table: "+table+", to: pg, schema: s}\n  u:\n    transfer: {from: fs, table: "+table+", to: pg, schema: s2}\n"), "weir.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		gh, fs := f.Tasks[0], f.Tasks[1]
		if gh.Name == "u" {
			gh, fs = fs, gh
		}
		if src := gh.Sources()[0]; src.Table != table || src.Schema != "" {
			t.Errorf("from github: source %s, want the object path %s", src, table)
		}
		if got, want := gh.Sinks()[0].Table, fs.Sinks()[0].Table; got != want || got != "orders" {
			t.Errorf("from github: sink table %s, from file:// %s, want orders", got, want)
		}
	}
	_, err := Parse([]byte(conns+"tasks:\n  t:\n    transfer: {from: pg, table: public.orders, to: gh}\n"), "weir.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), `connection "gh" is a github:// source: it cannot be written`) {
		t.Fatalf("to: a github connection: %v", err)
	}
}

// TestTransferGitHubAPISource: a github+api:// connection is a source
// only; a transfer's to: naming one is refused.
func TestTransferGitHubAPISource(t *testing.T) {
	const conns = "version: 1\nconnections:\n  gha: \"github+api://acme/widgets?token=${GITHUB_TOKEN}\"\n  pg: \"postgres://u@h/db\"\n"
	if _, err := Parse([]byte(conns+"tasks:\n  t:\n    transfer: {from: gha, table: issues, to: pg, schema: s}\n"), "weir.yaml", nil); err != nil {
		t.Fatalf("from: a github+api connection: %v", err)
	}
	_, err := Parse([]byte(conns+"tasks:\n  t:\n    transfer: {from: pg, table: public.orders, to: gha}\n"), "weir.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), `connection "gha" is a github+api:// source: it cannot be written`) {
		t.Fatalf("to: a github+api connection: %v", err)
	}
}
