package gsheetstest

import (
	"context"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/routestest"
)

// Fixture is the routes matrix's gsheets:// source: each table is a tab of
// one spreadsheet on the peer, its header id, name, amount, ts, flag; id
// a number, name and amount text cells (amount keeps its two decimals as
// text), ts a date-time formatted yyyy-mm-dd hh:mm:ss, flag a checkbox.
// The URL reads it typed, keyed by id, 40 rows a page.
type Fixture struct {
	Server *Server
	ID     string
}

var (
	_ routestest.SourceFixture = (*Fixture)(nil)
	_ routestest.BlankIsNull   = (*Fixture)(nil)
)

// New starts the peer with an empty spreadsheet.
func New(t testing.TB) *Fixture {
	s := NewServer(t)
	f := &Fixture{Server: s, ID: "1weir" + routestest.Name("sheet")}
	s.CreateSpreadsheet(f.ID, false)
	return f
}

// URL reads the spreadsheet typed, keyed by id, in pages of 40 rows.
func (f *Fixture) URL() string {
	return "gsheets://" + f.ID + "?typed=1&key=id&page_rows=40&endpoint=" + f.Server.URL
}

// Ref is the tab's title.
func (f *Fixture) Ref(name string) string { return name }

// Create makes tab name holding rows.
func (f *Fixture) Create(_ testing.TB, _ context.Context, name string, rows []routestest.Row) {
	f.Server.SetTab(f.ID, name, append([][]Cell{{Text("id"), Text("name"), Text("amount"), Text("ts"), Text("flag")}}, cells(rows)...))
}

// Insert appends rows to tab name.
func (f *Fixture) Insert(_ testing.TB, _ context.Context, name string, rows []routestest.Row) {
	f.Server.AppendRows(f.ID, name, cells(rows))
}

// CreateKeyless makes tab name with the one column id.
func (f *Fixture) CreateKeyless(_ testing.TB, _ context.Context, name string, ids []*int64) {
	rows := [][]Cell{{Text("id")}}
	for _, id := range ids {
		c := Blank
		if id != nil {
			c = Num(float64(*id))
		}
		rows = append(rows, []Cell{c})
	}
	f.Server.SetTab(f.ID, name, rows)
}

// BlankIsNull: a sheet keeps no empty text apart from a blank cell.
func (f *Fixture) BlankIsNull() {}

// Read fails: gsheets:// is a source only.
func (f *Fixture) Read(t testing.TB, _ context.Context, name string) ([]routestest.Row, bool) {
	t.Fatalf("gsheets:// is a source only: nothing reads %s back from it", name)
	return nil, false
}

// Staging is empty: gsheets:// stages nothing.
func (f *Fixture) Staging(testing.TB, context.Context, string) []string { return nil }

func cells(rows []routestest.Row) [][]Cell {
	var out [][]Cell
	for _, r := range rows {
		row := []Cell{Num(float64(r.ID)), Blank, Blank, Blank, Blank}
		if r.Name != nil {
			row[1] = Text(*r.Name)
		}
		if r.Amount != nil {
			row[2] = Text(*r.Amount)
		}
		if r.TS != nil {
			row[3] = DateTime(r.TS.UTC(), time.DateTime)
		}
		if r.Flag != nil {
			row[4] = Bool(*r.Flag)
		}
		out = append(out, row)
	}
	return out
}
