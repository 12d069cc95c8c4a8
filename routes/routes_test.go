package routes

import (
	"errors"
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	u, err := ParseURL("postgres://u:pw@h:5432/db?sslmode=disable")
	if err != nil || u.Scheme() != "postgres" || u.Password() != "pw" || strings.Contains(u.String(), "pw@") {
		t.Fatalf("ParseURL: %v %v", u, err)
	}
	if u.Identity() != "postgres://h:5432/db" {
		t.Errorf("Identity = %q", u.Identity())
	}
	if f, err := ParseURL("./data/x"); err != nil || f.Scheme() != "file" {
		t.Errorf("bare path: %v %v", f, err)
	}
	for _, raw := range []string{"postgres://u:pw@h:port/db", "postgres://u:p w@h/db", "postgres://u:p\tw@h/db?x=1", "mysql://u:p%zzw@h/db"} {
		_, err = ParseURL(raw)
		if !errors.Is(err, ErrBadInput) || strings.Contains(err.Error(), "p w") || strings.Contains(err.Error(), "pw") || strings.Contains(err.Error(), "p\tw") || strings.Contains(err.Error(), "zzw") {
			t.Errorf("ParseURL(%q) error: %v", raw, err)
		}
	}
}

func TestParseTableRef(t *testing.T) {
	tests := []struct {
		in   string
		want TableRef
		bad  bool
	}{
		{in: "public.events", want: TableRef{"public", "events"}},
		{in: "events", want: TableRef{Name: "events"}},
		{in: `"my.schema"."Tab""le"`, want: TableRef{"my.schema", `Tab"le`}},
		{in: "a.b.c", bad: true},
		{in: "orders.csv.gz", want: TableRef{Name: "orders.csv.gz"}},
		{in: "orders.parquet", want: TableRef{Name: "orders.parquet"}},
		{in: "in/2024.01/orders.CSV", want: TableRef{Name: "in/2024.01/orders.CSV"}},
		{in: "raw/orders", want: TableRef{Name: "raw/orders"}},
		{in: `"x.csv"."y.gz"`, want: TableRef{"x.csv", "y.gz"}},
		{in: `"a"."b"`, want: TableRef{"a", "b"}},
		{in: `s."t.u"`, want: TableRef{"s", "t.u"}},
		{in: `"""q"""`, want: TableRef{Name: `"q"`}},
		{in: "ünï.日本", want: TableRef{"ünï", "日本"}},
		{in: `"my table"`, want: TableRef{Name: "my table"}},
		// malformed: every form is refused, never read as something else
		{in: "", bad: true},
		{in: ".", bad: true},
		{in: "a..b", bad: true},
		{in: "x..y", bad: true},
		{in: "sch.", bad: true},
		{in: ".t", bad: true},
		{in: "x.y.z", bad: true},
		{in: "a.b.c.d", bad: true},
		{in: `""`, bad: true},
		{in: `"".t`, bad: true},
		{in: `s.""`, bad: true},
		{in: `"open`, bad: true},
		{in: `s."open`, bad: true},
		{in: `open"`, bad: true},
		{in: `a"b"c`, bad: true},
		{in: `"a"b`, bad: true},
		{in: `"a".`, bad: true},
		{in: `"a"."b"."c"`, bad: true},
		{in: "my table", bad: true},
		{in: "s.t\n", bad: true},
		{in: "s.t\x00", bad: true},
		{in: "tab\tname", bad: true},
		{in: "s.t\x7f", bad: true},
	}
	for _, tc := range tests {
		got, err := ParseTableRef(tc.in)
		if tc.bad != (err != nil) || (!tc.bad && got != tc.want) {
			t.Errorf("ParseTableRef(%q) = %v, %v", tc.in, got, err)
		}
		if err != nil && !errors.Is(err, ErrBadInput) {
			t.Errorf("ParseTableRef(%q): %v is not bad input (exit 2)", tc.in, err)
		}
	}
}

func TestBudget(t *testing.T) {
	tests := []struct {
		name     string
		cpus     int
		mem      int64
		parallel int
		chunk    int
	}{
		{"no cap", 16, 0, 8, DefaultChunkBytes},
		{"one cpu", 1, 0, 2, DefaultChunkBytes},
		{"64 MiB cap fits 4 pipes of 4 MiB", 4, 64 << 20, 4, 4 << 20},
		{"32 MiB cap thins chunks first", 4, 32 << 20, 4, 2 << 20},
		{"8 MiB cap thins chunks, then pipes", 4, 8 << 20, 2, 1 << 20},
	}
	for _, tc := range tests {
		b := budgetFor(tc.cpus, tc.mem)
		if b.Parallel != tc.parallel || b.ChunkBytes != tc.chunk {
			t.Errorf("%s: budgetFor(%d, %d) = %+v", tc.name, tc.cpus, tc.mem, b)
		}
	}
}

func TestParseSchema(t *testing.T) {
	tests := []struct {
		in, want string
		bad      bool
	}{
		{in: "public", want: "public"},
		{in: `"my.schema"`, want: "my.schema"},
		{in: "out/daily", want: "out/daily"},
		{in: "a.b", bad: true},
		{in: "", bad: true},
		{in: "sch.", bad: true},
		{in: `"open`, bad: true},
	}
	for _, tc := range tests {
		got, err := ParseSchema(tc.in)
		if tc.bad != (err != nil) || (!tc.bad && got != tc.want) || (err != nil && !errors.Is(err, ErrBadInput)) {
			t.Errorf("ParseSchema(%q) = %q, %v", tc.in, got, err)
		}
		if src, err := ParseSourceSchema(tc.in); src != got || (err != nil) != tc.bad {
			t.Errorf("ParseSourceSchema(%q) = %q, %v; want ParseSchema's answer", tc.in, src, err)
		}
	}
	// a source's --schema . is the top of its path; a destination's is refused
	if got, err := ParseSourceSchema("."); err != nil || got != RootSchema {
		t.Errorf(`ParseSourceSchema(".") = %q, %v`, got, err)
	}
	if _, err := ParseSchema("."); !errors.Is(err, ErrBadInput) {
		t.Errorf(`ParseSchema(".") = %v, want bad input`, err)
	}
}
