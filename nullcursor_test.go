package weir_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/clickhouse/clickhousetest"
	"github.com/weirhq/weir/routes/iceberg/icebergtest"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestTransfer_NullCursorRefused: rows whose cursor is NULL are neither
// past a watermark nor at most the maximum, so an append or merge would
// never copy them (it landed 17 of 20 rows, exit 0). The run is refused as
// bad input naming the column and the count, before anything is written;
// a nullable cursor that holds no NULL still runs. Every source that can
// run incrementally (every routes.CursorSource) is here.
func TestTransfer_NullCursorRefused(t *testing.T) {
	ctx := routestest.Context(t, 3*time.Minute)
	sources := []struct {
		name string
		fx   routestest.Fixture
	}{
		{"postgres", postgrestest.New(t)},
		{"mysql", mysqltest.New(t)},
		{"clickhouse", clickhousetest.New(t)},
		{"iceberg", icebergtest.New(t)},
		{"file", objstoretest.NewFile(t)},
		{"file-csv", objstoretest.NewFile(t, "format=csv.gz")},
		{"s3", objstoretest.NewS3(t)},
	}
	for _, s := range sources {
		for _, mode := range []routes.Mode{routes.ModeAppend, routes.ModeMerge} {
			t.Run(s.name+"/"+string(mode), func(t *testing.T) {
				lake := t.TempDir()
				dst := "iceberg://?catalog=sql&uri=sqlite://" + filepath.Join(lake, "catalog.db") + "&warehouse=file://" + lake
				s.fx.Create(t, ctx, "nulls_"+string(mode), routestest.Rows(1, 20)) // ts is NULL for ids 6, 12, 18
				opts := weir.TransferOptions{Tables: []string{s.fx.Ref("nulls_" + string(mode))}, DestTable: "bronze.t", Mode: mode, Cursor: "ts"}
				_, err := weir.Transfer(ctx, s.fx.URL(), dst, opts)
				var pe *routes.ProbeError
				if !errors.As(err, &pe) || pe.Column != "ts" || !strings.Contains(err.Error(), "3 rows have a NULL cursor") {
					t.Fatalf("append over a cursor with 3 NULLs: %v; want bad input naming ts and the 3 rows", err)
				}
				if _, err := weir.Read(ctx, dst, "bronze.t", weir.ReadOptions{}); err == nil {
					t.Fatal("the refused run created bronze.t")
				}

				s.fx.Create(t, ctx, "full_"+string(mode), routestest.Rows(1, 5)) // nullable ts, no NULL
				opts.Tables = []string{s.fx.Ref("full_" + string(mode))}
				rep, err := weir.Transfer(ctx, s.fx.URL(), dst, opts)
				if err != nil || rep.Rows != 5 {
					t.Fatalf("append over a nullable cursor without NULLs: %d rows, %v; want 5", rep.Rows, err)
				}
			})
		}
	}
}
