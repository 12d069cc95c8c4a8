package weir_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// TestTransfer_TwoTablesOneDestinationRefused: two source tables that would
// land in one destination table in one run — a.t and b.t with
// --dest-schema S, or t.csv and t.csv.gz (both named t by their stem) — are
// refused as bad input before a row moves (found by the session-10 attack:
// both reported "→ S.t", exit 0, and S.t held the second table's rows
// only). log_based pairs are held to the same rule.
func TestTransfer_TwoTablesOneDestinationRefused(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	a, b, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "postgres")
	a.Exec(t, ctx, "CREATE TABLE "+a.Table("t")+" (id int PRIMARY KEY); INSERT INTO "+a.Table("t")+" VALUES (1)")
	b.Exec(t, ctx, "CREATE TABLE "+b.Table("t")+" (id int PRIMARY KEY); INSERT INTO "+b.Table("t")+" VALUES (2)")
	refused := func(what string, err error, names ...string) {
		t.Helper()
		if !errors.Is(err, routes.ErrBadInput) {
			t.Fatalf("%s: %v, want bad input", what, err)
		}
		for _, n := range names {
			if !strings.Contains(err.Error(), n) {
				t.Errorf("%s: %q does not name %s", what, err, n)
			}
		}
	}
	for _, mode := range []routes.Mode{routes.ModeReplace, routes.ModeAppend} {
		_, err := weir.Transfer(ctx, a.URL, dst.URL, weir.TransferOptions{Tables: []string{a.Schema + ".t", b.Schema + ".t"}, DestSchema: dst.Schema, Mode: mode, Cursor: "id"})
		refused("--tables a.t,b.t --dest-schema S, "+string(mode), err, a.Schema+".t", b.Schema+".t", dst.Schema+".t")
		if dst.Exists(t, ctx, "t") {
			t.Fatalf("%s: %s.t was written before the refusal", mode, dst.Schema)
		}
	}
	_, err := weir.Transfer(ctx, a.URL, dst.URL, weir.TransferOptions{Tables: []string{a.Schema + ".t", b.Schema + ".t"}, DestSchema: dst.Schema, Mode: routes.ModeLogBased})
	refused("log_based --tables a.t,b.t --dest-schema S", err, dst.Schema+".t")

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "t.csv"), []byte("id\n1\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "u.csv"), []byte("id\n3\n"), 0o644)
	writeGzip(t, filepath.Join(dir, "t.csv.gz"), "id\n2\n")
	_, err = weir.Transfer(ctx, "file://"+dir, dst.URL, weir.TransferOptions{Tables: []string{"t.csv", "t.csv.gz"}, DestSchema: dst.Schema})
	refused("t.csv and t.csv.gz", err, "t.csv", "t.csv.gz", dst.Schema+".t")
	if dst.Exists(t, ctx, "t") {
		t.Fatalf("%s.t was written before the refusal", dst.Schema)
	}
	// distinct stems still move together
	if _, err := weir.Transfer(ctx, "file://"+dir, dst.URL, weir.TransferOptions{Tables: []string{"t.csv", "u.csv"}, DestSchema: dst.Schema}); err != nil {
		t.Fatal(err)
	}
	if got := dst.Query(t, ctx, "SELECT (SELECT id FROM "+dst.Table("t")+") || ',' || (SELECT id FROM "+dst.Table("u")+")"); got != "1,3" {
		t.Fatalf("t.csv, u.csv moved %s", got)
	}
}

func writeGzip(t *testing.T, path, content string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(content))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
