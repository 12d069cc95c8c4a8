package dagfile

import (
	"strings"
	"testing"
)

// A gsheets:// connection is a transfer's from: like any other; as a to:
// it is refused (it is a source only).
func TestTransferGSheetsSourceOnly(t *testing.T) {
	const conns = "version: 1\nconnections:\n  sheet: \"gsheets://1AbC?typed=1&credentials=${SA_KEY}\"\n  pg: \"postgres://u@h/db\"\n"
	if _, err := Parse([]byte(conns+"tasks:\n  t:\n    transfer: {from: sheet, table: Orders, to: pg, schema: s}\n"), "weir.yaml", nil); err != nil {
		t.Fatal(err)
	}
	_, err := Parse([]byte(conns+"tasks:\n  t:\n    transfer: {from: pg, table: public.orders, to: sheet}\n"), "weir.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), `connection "sheet" is a gsheets:// source: it cannot be written`) {
		t.Fatalf("to: a gsheets connection: %v", err)
	}
}
