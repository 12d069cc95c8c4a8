package iceberg

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"

	"github.com/weirhq/weir/routes"
)

func namedInfo(cols ...routes.Column) *routes.TableInfo {
	return &routes.TableInfo{Ref: routes.TableRef{Schema: "s", Name: "t"}, Columns: cols}
}

func textColumns(names ...string) []routes.Column {
	cols := make([]routes.Column, len(names))
	for i, n := range names {
		cols[i] = routes.Column{Name: n, Type: arrow.BinaryTypes.String, Nullable: true}
	}
	return cols
}

// structOf is a struct column whose fields are names (text), and a list
// of such structs when list.
func structOf(name string, list bool, fields ...string) routes.Column {
	fs := make([]arrow.Field, len(fields))
	for i, f := range fields {
		fs[i] = arrow.Field{Name: f, Type: arrow.BinaryTypes.String, Nullable: true}
	}
	var typ arrow.DataType = arrow.StructOf(fs...)
	if list {
		typ = arrow.ListOf(typ)
	}
	return routes.Column{Name: name, Type: typ, Nullable: true}
}

// TestColumnRule_AgreesWithIcebergGo: columnRule refuses a set of column
// names exactly when iceberg-go refuses to write the table's schema
// (iceberg.SanitizeColumnNames, the writers' own check), for every pair
// of names built from odd characters (punctuation, a space, digits first
// and later, non-ASCII letters, marks and symbols, characters outside the
// BMP, case), as columns and as a struct's fields; and when it refuses,
// it is bad input naming the table and both names.
func TestColumnRule_AgreesWithIcebergGo(t *testing.T) {
	parts := []string{"a", "A", "_", "b", ".", "-", " ", "1", "١", "ü", "Ü", "名", "²", "\u0301", "😀", "𝟎",
		"_x2E", "_x2D", "_x20", "_1", "_xB2", "_x301", "_xD83D_xDE00", "_xD835_xDFCE", "_x31"}
	var names []string
	for _, p := range parts {
		for _, q := range parts {
			names = append(names, p+q)
		}
	}
	refused := 0
	for i, x := range names {
		for _, y := range names[i+1:] {
			for _, shape := range []string{"columns", "struct", "list of struct"} {
				info := namedInfo(textColumns(x, y)...)
				if shape != "columns" {
					info = namedInfo(append(textColumns("id"), structOf("s", shape == "list of struct", x, y))...)
				}
				sc, err := tableSchema(info)
				if err != nil {
					t.Fatal(err)
				}
				_, icebergErr := iceberg.SanitizeColumnNames(sc)
				err = routes.CheckColumnNames(info, columnRule)
				if (err != nil) != (icebergErr != nil) {
					t.Fatalf("%s %q and %q: weir says %v, iceberg-go says %v", shape, x, y, err, icebergErr)
				}
				if err == nil {
					continue
				}
				refused++
				if msg := err.Error(); !errors.Is(err, routes.ErrBadInput) || !strings.HasPrefix(msg, "s.t.") ||
					!strings.Contains(msg, x) || !strings.Contains(msg, y) {
					t.Fatalf("%s %q and %q: %v, want bad input naming s.t and both", shape, x, y, err)
				}
			}
		}
	}
	if refused == 0 {
		t.Fatal("no pair collided: the test's names do not exercise the rule")
	}
	t.Logf("%d names, %d pairs × 3 shapes, %d refused", len(names), len(names)*(len(names)-1)/2, refused)
}

// TestColumnRule_Cases: the collisions weir's users meet, and odd names
// that land: Iceberg compares names exactly ("Name" and "name" are two
// columns), a leading digit is written as _ and the digit (so "1a" and
// "_x31a" are two), and structs' fields are checked per struct (two
// structs may each have a field written "a_x2Eb").
func TestColumnRule_Cases(t *testing.T) {
	cases := []struct {
		cols   []routes.Column
		refuse bool
	}{
		{textColumns("a.b", "a_x2Eb"), true},
		{textColumns("id", "1a", "_1a"), true},
		{textColumns("a-b", "a_x2Db"), true},
		{textColumns("😀", "_xD83D_xDE00"), true},
		{textColumns("a.b"), false},
		{textColumns("a b", "naïve", "名前"), false},
		{textColumns("Name", "name"), false},
		{textColumns("1a", "_x31a"), false},
		{[]routes.Column{structOf("s", false, "a.b", "a_x2Eb")}, true},
		{[]routes.Column{structOf("s", true, "a.b", "a_x2Eb")}, true},
		{[]routes.Column{structOf("s", false, "a.b"), structOf("u", false, "a_x2Eb")}, false},
		{append(textColumns("a.b"), structOf("a_x2Eb", false, "x")), true},
		{textColumns(""), true},
		{textColumns("a\xffb"), true},
	}
	for _, c := range cases {
		info := namedInfo(c.cols...)
		err := routes.CheckColumnNames(info, columnRule)
		if (err != nil) != c.refuse || err != nil && !errors.Is(err, routes.ErrBadInput) {
			t.Errorf("%v: %v, want refused %v (bad input)", info.Schema(), err, c.refuse)
		}
	}
}
