package iceberg

import (
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
)

func TestParseConfig(t *testing.T) {
	cwd, _ := filepath.Abs(".")
	pg := "postgres://u:s3cret@db:5432/cat?sslmode=disable"
	tests := []struct {
		name, raw                        string
		catalog, dialect, uri, warehouse string
		snapshot                         int64
	}{
		{"sqlite", "iceberg://?catalog=sql&uri=sqlite:///data/c.db&warehouse=file:///data/lake", "sql", "sqlite", "/data/c.db", "file:///data/lake", 0},
		{"relative", "iceberg://?uri=sqlite://./lake/c.db", "sql", "sqlite", cwd + "/lake/c.db", "file://" + cwd + "/lake", 0},
		{"postgres", "iceberg://?catalog=sql&uri=" + url.QueryEscape(pg) + "&warehouse=/w&snapshot=42", "sql", "postgres", pg, "file:///w", 42},
		{"rest", "iceberg+rest://cat:8181/api?warehouse=wh&tls=true", "rest", "", "https://cat:8181/api", "wh", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := routes.ParseURL(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			c, err := parseConfig(u)
			if err != nil {
				t.Fatal(err)
			}
			if c.catalog != tc.catalog || c.dialect != tc.dialect || c.uri != tc.uri || c.warehouse != tc.warehouse || c.snapshot != tc.snapshot {
				t.Fatalf("got %+v", c)
			}
			if strings.Contains(c.identity, "s3cret") || strings.Contains(safeURL(u), "s3cret") {
				t.Fatalf("password in identity %q or message %q", c.identity, safeURL(u))
			}
		})
	}
}

func TestParseConfig_BadInput(t *testing.T) {
	for _, raw := range []string{
		"iceberg://?catalog=hive&uri=sqlite:///x.db",
		"iceberg://?uri=mysql://x",
		"iceberg://?uri=" + url.QueryEscape("postgres://u:s3cret@h/db"),
		"iceberg://?uri=sqlite:///x.db&snapshot=abc",
	} {
		u, _ := routes.ParseURL(raw)
		_, err := parseConfig(u)
		if !errors.Is(err, routes.ErrBadInput) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v", raw, err)
		}
	}
}
