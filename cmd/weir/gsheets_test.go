package main

import (
	"strings"
	"testing"

	gs "github.com/weirhq/weir/routes/gsheets/gsheetstest"
)

// weir transfer from gsheets:// exits 2 on bad input before a row moves
// (an unknown spreadsheet, one not shared, an unknown tab), and moves a
// tab otherwise.
func TestGSheetsTransferExitCodes(t *testing.T) {
	s := gs.NewServer(t)
	s.CreateSpreadsheet("book", false)
	s.CreateSpreadsheet("private", true)
	s.SetTab("book", "Orders", [][]gs.Cell{{gs.Text("id"), gs.Text("item")}, {gs.Num(1), gs.Text("a")}, {gs.Num(2), gs.Text("b")}})
	dst := "file://" + t.TempDir()
	for _, tt := range []struct {
		url, table string
		want       int
	}{
		{"gsheets://nope?endpoint=" + s.URL, "Orders", ExitBadInput},
		{"gsheets://private?endpoint=" + s.URL, "Orders", ExitBadInput},
		{"gsheets://book?endpoint=" + s.URL, "Nope", ExitBadInput},
		{"gsheets://book?typed=1&endpoint=" + s.URL, "Orders", ExitOK},
	} {
		if code, out := runCmd(t, "transfer", tt.url, dst, "--table", tt.table); code != tt.want {
			t.Errorf("weir transfer %s --table %s: exit %d, want %d: %s", tt.url, tt.table, code, tt.want, strings.TrimSpace(out))
		}
	}
}
