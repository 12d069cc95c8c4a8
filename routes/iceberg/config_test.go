package iceberg

import (
	"errors"
	"net/url"
	"path/filepath"
	"reflect"
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
		{"rest", "iceberg+rest://cat:8181/api?warehouse=wh&tls=true&credential=id:s3cret", "rest", "", "https://cat:8181/api", "wh", 0},
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
			if strings.Contains(c.identity, "s3cret") || strings.Contains(u.String(), "s3cret") {
				t.Fatalf("password in identity %q or message %q", c.identity, u.String())
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
		"iceberg://?uri=sqlite:///x.db&warehouse=s3://lake&path_style=maybe",
		"iceberg://?uri=sqlite:///x.db&warehouse=gs://lake/wh",
		"iceberg://?uri=sqlite:///x.db&warehouse=" + url.QueryEscape("s3://k:s3cret@/nobucket"),
	} {
		u, _ := routes.ParseURL(raw)
		_, err := parseConfig(u)
		if !errors.Is(err, routes.ErrBadInput) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v", raw, err)
		}
	}
}

func TestParseConfig_S3Warehouse(t *testing.T) {
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	tests := []struct {
		name, query, warehouse string
		props                  map[string]string
	}{
		{"keys in the warehouse URL", "warehouse=s3://AKID:s3cret@lake/wh/&endpoint=http://127.0.0.1:9100&region=eu-west-1",
			"s3://lake/wh", map[string]string{"s3.endpoint": "http://127.0.0.1:9100", "s3.region": "eu-west-1",
				"s3.access-key-id": "AKID", "s3.secret-access-key": "s3cret"}},
		{"default region, virtual-hosted", "warehouse=s3://lake/wh&path_style=false",
			"s3://lake/wh", map[string]string{"s3.region": DefaultS3Region, "s3.force-virtual-addressing": "true"}},
		{"explicit s3 properties win", "warehouse=s3://lake&endpoint=http://a&s3.endpoint=http://b&s3.region=ap-south-1",
			"s3://lake", map[string]string{"s3.endpoint": "http://b", "s3.region": "ap-south-1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := routes.ParseURL("iceberg://?uri=sqlite:///c.db&" + tc.query)
			if err != nil {
				t.Fatal(err)
			}
			c, err := parseConfig(u)
			if err != nil {
				t.Fatal(err)
			}
			if c.warehouse != tc.warehouse || !reflect.DeepEqual(c.props, tc.props) {
				t.Fatalf("warehouse %q props %v; want %q %v", c.warehouse, c.props, tc.warehouse, tc.props)
			}
			if strings.Contains(c.identity, "s3cret") || strings.Contains(u.String(), "s3cret") {
				t.Fatalf("secret in identity %q or message %q", c.identity, u.String())
			}
		})
	}
}
