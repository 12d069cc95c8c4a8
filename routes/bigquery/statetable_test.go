package bigquery

import (
	"errors"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/bigquery/bigquerytest"
)

// TestEmulator_StateTableNotWeirs: a dataset whose _weir_state is the
// user's own table is refused, bad input naming it, by the state read
// (append's watermark) and by a replace's and an append's run, and the
// table keeps its row: weir would read watermarks from it and write its
// commits into it. It used to fail on its columns, exit 1.
func TestEmulator_StateTableNotWeirs(t *testing.T) {
	f := bigquerytest.New(t)
	e := openEndpoint(t, f, "format=json")
	ctx := t.Context()
	f.Exec(t, ctx, "CREATE TABLE "+f.Ident(StateTable)+" (dest_table STRING, note STRING)",
		"INSERT INTO "+f.Ident(StateTable)+" (dest_table, note) VALUES ('mine', 'keep me')")
	want := f.Dataset + "." + StateTable
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "not weir's state table") {
			t.Errorf("%s: err = %v, want bad input naming %s", what, err, want)
		}
	}
	_, _, err := e.LoadState(ctx, routes.TableRef{Schema: f.Dataset, Name: "t"}, "test#t")
	check("load state", err)
	info := typesInfo("t")
	for _, mode := range []routes.Mode{routes.ModeReplace, routes.ModeAppend} {
		check(string(mode), load(t, e, info, "t", mode, "2", []int64{1, 2}))
		if f.Exists(t, ctx, "t") {
			t.Errorf("%s: refused after the table was swapped in", mode)
		}
	}
	got := f.Query(t, ctx, "SELECT dest_table, note FROM "+f.Ident(StateTable))
	if len(got) != 1 || got[0][0] != "mine" || got[0][1] != "keep me" {
		t.Fatalf("the user's _weir_state now holds %v", got)
	}
}
