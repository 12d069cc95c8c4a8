package routes

import (
	"errors"
	"testing"
)

// TestDestRef is the rule's table: every scheme family, with and without a
// database in the URL, with and without --dest-table / --dest-schema.
func TestDestRef(t *testing.T) {
	src := TableRef{Schema: "public", Name: "orders"}
	cases := []struct {
		url, table, schema string
		want               string // "" with bad input
	}{
		{"mysql://u@h:3306/shop", "", "", "shop.orders"},
		{"mariadb://u@h/shop?tls=true", "", "", "shop.orders"},
		{"mysql://u@h:3306/shop", "", "stage", "stage.orders"},
		{"mysql://u@h:3306/shop", "x", "", "shop.x"},
		{"mysql://u@h:3306/shop", "other.x", "", "other.x"},
		{"mysql://u@h:3306/shop", "other.x", "stage", "stage.x"},
		{"mysql://u@h:3306", "", "", ""},
		{"mysql://u@h:3306/", "x", "", ""},
		{"mysql://u@h:3306", "", "stage", "stage.orders"},
		{"mysql://u@h:3306", "other.x", "", "other.x"},
		{"clickhouse://u@h:9000/analytics", "", "", "analytics.orders"},
		{"clickhouse+http://h:8123/analytics", "", "", "analytics.orders"},
		{"clickhouse+https://h:8443/analytics", "x", "", "analytics.x"},
		{"clickhouse://u@h:9000", "", "", "default.orders"},
		{"clickhouse://u@h:9000/analytics", "", "stage", "stage.orders"},
		{"postgres://u@h/db", "", "", "public.orders"},
		{"postgres://u@h/db", "x", "", "x"}, // the server's current_schema()
		{"postgres://u@h/db", "", "stage", "stage.orders"},
		{"file:///tmp/out", "", "", "public.orders"},
		{"iceberg://?catalog=sql&uri=sqlite:///tmp/c.db", "", "", "public.orders"},
	}
	for _, tc := range cases {
		u, err := ParseURL(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		var table TableRef
		if tc.table != "" {
			if table, err = ParseTableRef(tc.table); err != nil {
				t.Fatal(err)
			}
		}
		got, err := DestRef(u, src, table, tc.schema)
		if tc.want == "" {
			if !errors.Is(err, ErrBadInput) {
				t.Errorf("%s table=%q schema=%q: %v, %v; want bad input", tc.url, tc.table, tc.schema, got, err)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("%s table=%q schema=%q: %v, %v; want %s", tc.url, tc.table, tc.schema, got, err, tc.want)
		}
	}
	if got, err := DestRef(nil, src, TableRef{}, ""); err != nil || got != src {
		t.Errorf("no URL: %v, %v; want the source's name", got, err)
	}
}
