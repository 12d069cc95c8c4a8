package weir_test

import (
	"slices"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestTransfer_SchemaDotIsTheSourceRoot: `--schema .` on a file-like
// source transfers every table under the URL's folder (docs/routes-api.md,
// github://), and `--schema FOLDER` those under a folder; a destination
// schema of "." is refused.
func TestTransfer_SchemaDotIsTheSourceRoot(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	g := objstoretest.NewGitHubServer(t)
	g.CreateRepo("weir/root", false)
	g.Commit("weir/root", "main", map[string][]byte{
		"orders.csv":   []byte("id,name\n1,a\n2,b\n"),
		"in/items.csv": []byte("id\n7\n"),
	})
	src := "github://weir/root?ref=main&endpoint=" + g.URL
	for _, tc := range []struct {
		schema string
		want   []string
	}{
		{".", []string{"items", "orders"}},
		{"in", []string{"items"}},
	} {
		dst := "file://" + t.TempDir()
		rep, err := weir.Transfer(ctx, src, dst, weir.TransferOptions{Schema: tc.schema})
		if err != nil {
			t.Fatalf("--schema %s: %v", tc.schema, err)
		}
		var got []string
		for _, tr := range rep.Tables {
			got = append(got, tr.DestTable)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("--schema %s moved %v, want %v", tc.schema, got, tc.want)
		}
	}
	if _, err := weir.Transfer(ctx, src, "file://"+t.TempDir(), weir.TransferOptions{Schema: ".", DestSchema: "."}); err == nil {
		t.Error(`--dest-schema . accepted`)
	}
}
