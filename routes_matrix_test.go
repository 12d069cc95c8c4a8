package weir_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/routes"
	_ "github.com/weirhq/weir/routes/all"
	"github.com/weirhq/weir/routes/bigquery/bigquerytest"
	"github.com/weirhq/weir/routes/clickhouse/clickhousetest"
	"github.com/weirhq/weir/routes/iceberg/icebergtest"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

var update = flag.Bool("update", false, "rewrite docs/routes.md from the matrix")

// fixtures: the servers each scheme's cells run against, and what its
// destination supports.
var fixtures = map[string]struct {
	new  func(t *testing.T) routestest.Fixture
	caps routestest.Caps
}{
	"postgres":   {func(t *testing.T) routestest.Fixture { return postgrestest.New(t) }, routestest.Caps{Append: true, Merge: true}},
	"clickhouse": {func(t *testing.T) routestest.Fixture { return clickhousetest.New(t) }, routestest.Caps{Append: true}},
	"mysql":      {func(t *testing.T) routestest.Fixture { return mysqltest.New(t) }, routestest.Caps{Append: true, Merge: true}},
	"iceberg":    {func(t *testing.T) routestest.Fixture { return icebergtest.New(t) }, routestest.Caps{Append: true, Merge: true}},
	"bigquery":   {func(t *testing.T) routestest.Fixture { return bigquerytest.New(t) }, routestest.Caps{Append: true}}, // merge: the emulator's MERGE fails (docs/bigquery.md, Tests)
	"file":       {func(t *testing.T) routestest.Fixture { return objstoretest.NewFile(t) }, routestest.Caps{Append: true}},
	"s3":         {func(t *testing.T) routestest.Fixture { return objstoretest.NewS3(t) }, routestest.Caps{Append: true}},
	"gcs":        {func(t *testing.T) routestest.Fixture { return objstoretest.NewGCS(t) }, routestest.Caps{Append: true}},
}

// TestRoutesMatrix runs the conformance cell for every implemented pair
// (-run 'TestRoutesMatrix/postgres/' selects one source) and checks that
// every other planned pair is deferred with a reason.
func TestRoutesMatrix(t *testing.T) {
	for _, src := range weir.PlannedSources {
		t.Run(src, func(t *testing.T) {
			for _, r := range weir.Matrix() {
				if r.Source != src {
					continue
				}
				checkPair(t, r)
			}
		})
	}
}

func checkPair(t *testing.T, r weir.Route) {
	if slices.Contains(weir.StreamSources, r.Source) {
		checkStreamPair(t, r)
		return
	}
	sf, srcOK := fixtures[r.Source]
	df, dstOK := fixtures[r.Destination]
	if !r.Implemented {
		if r.Reason == "" {
			t.Errorf("%s → %s is neither implemented nor deferred with a reason", r.Source, r.Destination)
		}
		if srcOK && dstOK {
			t.Errorf("%s → %s is deferred, but both ends have fixtures: run it and declare it implemented", r.Source, r.Destination)
		}
		return
	}
	t.Run(r.Destination, func(t *testing.T) {
		if !srcOK || !dstOK {
			t.Fatalf("%s → %s is declared implemented but has no fixture to exercise it", r.Source, r.Destination)
		}
		routestest.RunCell(t, sf.new(t), df.new(t), df.caps, transferFunc)
	})
}

func transferFunc(ctx context.Context, src, dst string, spec routes.CopySpec) error {
	_, err := weir.Transfer(ctx, src, dst, weir.TransferOptions{
		Tables:    []string{spec.Table.String()},
		DestTable: spec.DestTable.String(),
		Mode:      spec.Mode,
		Parallel:  spec.Budget.Parallel, ChunkBytes: spec.Budget.ChunkBytes,
	})
	return err
}

// TestRoutesDoc keeps docs/routes.md equal to the matrix (-update rewrites it).
func TestRoutesDoc(t *testing.T) {
	got := renderRoutesDoc()
	const path = "docs/routes.md"
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestRoutesDoc -update)", err)
	}
	if string(want) != got {
		t.Fatalf("%s is stale: run go test -run TestRoutesDoc -update", path)
	}
}

func renderRoutesDoc() string {
	var b strings.Builder
	b.WriteString("# Routes\n\nGenerated from `matrix.go` by `go test -run TestRoutesDoc -update`; `weir routes --all` prints the same.\n")
	b.WriteString("Every implemented pair is exercised by `TestRoutesMatrix` against real servers (replace, replace again,\n")
	b.WriteString("empty source keeps the table, append past the watermark where supported, a held lock refuses a second run,\nan aborted stage leaves the old table).\n")
	b.WriteString("Stream sources (sse, ws, kafka, pubsub) are exercised by a stream task instead (stream_matrix_test.go: two\n")
	b.WriteString("available_now runs with merge and a contract against an in-process protocol peer; the crash cases are in\nrunner/stream_test.go, see docs/streams.md).\n\n")
	b.WriteString("| source | destination | status |\n|---|---|---|\n")
	for _, r := range weir.Matrix() {
		status := "implemented"
		if !r.Implemented {
			status = "deferred: " + r.Reason
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.Source, r.Destination, status)
	}
	return b.String()
}
