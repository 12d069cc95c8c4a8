package iceberg_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
	wice "github.com/weirhq/weir/routes/iceberg"
	"github.com/weirhq/weir/routes/iceberg/icebergtest"
	"github.com/weirhq/weir/routes/routestest"
	"github.com/weirhq/weir/routes/where"
)

// A filtered read skips the data files the filter rules out and returns
// the rows a plain read and the client-side filter keep.
func TestReadWhere_PrunesFiles(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	f := icebergtest.New(t)
	f.Create(t, ctx, "t", routestest.Rows(1, 1000))
	f.Insert(t, ctx, "t", routestest.Rows(1001, 2000))
	f.Insert(t, ctx, "t", routestest.Rows(2001, 3000))
	ep := f.Endpoint()
	info, err := ep.Probe(ctx, f.TableRef("t"))
	if err != nil {
		t.Fatal(err)
	}
	tbl := loadTable(t, ctx, f, "t")
	all, err := wice.ScanFiles(ctx, tbl, info, nil)
	if err != nil || all != 3 {
		t.Fatalf("unfiltered scan plans %d files (%v), want 3", all, err)
	}
	tests := []struct {
		where string
		files int
		exact bool // all of it is pushed: the source decodes only the rows kept
	}{
		{"id > 2990", 1, true},
		{"id <= 10 OR id > 2995", 2, true},
		{"id >= 1500 AND name = 'plain'", 2, true},
		{"NOT id < 2001 AND amount > 0", 1, false}, // amount (decimal) stays on the client
		{"name IS NULL AND id < 0", 0, true},
		{"amount > 0", 3, false}, // nothing pushed
	}
	for _, tc := range tests {
		e, err := where.Parse(tc.where)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := wice.ScanFiles(ctx, tbl, info, e); err != nil || n != tc.files {
			t.Errorf("%s: the scan plans %d data files (%v), want %d of 3", tc.where, n, err, tc.files)
		}
		plainRead, plain := readRows(t, ep, info, e, false)
		read, got := readRows(t, ep, info, e, true)
		if !slices.Equal(got, plain) || read > plainRead || (tc.exact && read != len(got)) {
			t.Errorf("%s: the filtered read decodes %d rows and keeps %d, the plain one %d and %d (exact: %v)", tc.where, read, len(got), plainRead, len(plain), tc.exact)
		}
		pushed := ep.PushDown(e, info.Schema())
		if (pushed == "") != (tc.files == 3) {
			t.Errorf("%s: pushed %q", tc.where, pushed)
		}
	}
}

// readRows reads every range, with ReadWhere when filtered, and returns
// how many rows the streams delivered and, sorted, the rows the client
// filter keeps.
func readRows(t *testing.T, ep *wice.Endpoint, info *routes.TableInfo, e where.Expr, filtered bool) (int, []string) {
	t.Helper()
	ctx := routestest.Context(t, time.Minute)
	ranges, err := ep.Plan(ctx, info, routes.PlanOptions{Pipes: 2})
	if err != nil {
		t.Fatal(err)
	}
	read, out := 0, []string{}
	for _, r := range ranges {
		opts := routes.ReadOptions{Columns: []string{"id", "name", "amount"}}
		var s routes.Stream
		if filtered {
			s, err = ep.ReadWhere(ctx, r, opts, e)
		} else {
			s, err = ep.Read(ctx, r, opts)
		}
		if err != nil {
			t.Fatal(err)
		}
		filter, err := where.Compile(e, s.Schema())
		if err != nil {
			t.Fatal(err)
		}
		for s.Next() {
			read += int(s.RecordBatch().NumRows())
			rec, err := filter.Apply(ctx, s.RecordBatch(), memory.DefaultAllocator)
			if err != nil {
				t.Fatal(err)
			}
			if rec == nil {
				continue
			}
			for i := 0; i < int(rec.NumRows()); i++ {
				out = append(out, fmt.Sprintf("%v|%v|%v", rec.Column(0).ValueStr(i), rec.Column(1).ValueStr(i), rec.Column(2).ValueStr(i)))
			}
			rec.Release()
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		s.Release()
	}
	slices.Sort(out)
	return read, out
}
