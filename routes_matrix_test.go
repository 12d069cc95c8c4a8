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
	"github.com/weirhq/weir/routes/githubapi/githubapitest"
	"github.com/weirhq/weir/routes/gsheets/gsheetstest"
	"github.com/weirhq/weir/routes/iceberg/icebergtest"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

var update = flag.Bool("update", false, "rewrite docs/routes.md from the matrix")

// fixtures: the servers each scheme's cells run against. Every scheme
// registered as a source or destination needs one (TestRoutesMatrix_Registry).
var fixtures = map[string]func(t *testing.T) routestest.Fixture{
	"postgres":   func(t *testing.T) routestest.Fixture { return postgrestest.New(t) },
	"clickhouse": func(t *testing.T) routestest.Fixture { return clickhousetest.New(t) },
	"mysql":      func(t *testing.T) routestest.Fixture { return mysqltest.New(t) },
	"iceberg":    func(t *testing.T) routestest.Fixture { return icebergtest.New(t) },
	"bigquery":   func(t *testing.T) routestest.Fixture { return bigquerytest.New(t) },
	"file":       func(t *testing.T) routestest.Fixture { return objstoretest.NewFile(t) },
	"s3":         func(t *testing.T) routestest.Fixture { return objstoretest.NewS3(t) },
	"gcs":        func(t *testing.T) routestest.Fixture { return objstoretest.NewGCS(t) },
	"github":     func(t *testing.T) routestest.Fixture { return objstoretest.NewGitHub(t) },
	"github+api": func(t *testing.T) routestest.Fixture { return githubapitest.New(t) },
	"gsheets":    func(t *testing.T) routestest.Fixture { return gsheetstest.New(t) },
}

// untestedModes are the modes a destination registers that the cell
// cannot run, and why.
var untestedModes = map[string]map[routes.Mode]string{
	"bigquery":   {routes.ModeMerge: "the emulator's MERGE fails (docs/bigquery.md, Tests)"},
	"clickhouse": {routes.ModeMerge: "the cell's replace creates a MergeTree table, and merge is refused into one (docs/routes-clickhouse.md); routes/clickhouse tests merge"},
}

// testOnlySchemes are registered by this package's tests, not by weir.
var testOnlySchemes = []string{"pushdowntest", "countread", githubapitest.CellScheme}

// caps says which modes the cell runs into dst: those it registers, less
// untestedModes.
func caps(dst string) routestest.Caps {
	info, _ := routes.Describe(dst)
	has := func(m routes.Mode) bool {
		_, skip := untestedModes[dst][m]
		return slices.Contains(info.Modes, m) && !skip
	}
	return routestest.Caps{Append: has(routes.ModeAppend), Merge: has(routes.ModeMerge)}
}

// TestRoutesMatrix runs the conformance cell for every implemented pair
// (-run 'TestRoutesMatrix/postgres/' selects one source) and checks that
// every other planned pair is deferred with a reason.
func TestRoutesMatrix(t *testing.T) {
	var sources []string
	for _, r := range routes.Matrix() {
		if !slices.Contains(sources, r.Source) {
			sources = append(sources, r.Source)
		}
	}
	for _, src := range sources {
		t.Run(src, func(t *testing.T) {
			for _, r := range routes.Matrix() {
				if r.Source != src {
					continue
				}
				checkPair(t, r)
			}
		})
	}
}

// TestRoutesMatrix_Registry: every registered scheme is in the matrix with
// a fixture, an alias of one, or a test's own; a scheme registered
// without any of these fails (shown with a made-up registration).
func TestRoutesMatrix_Registry(t *testing.T) {
	if p := registryProblems(routes.Schemes(), routes.Describe); len(p) > 0 {
		t.Errorf("registry: %s", strings.Join(p, "; "))
	}
	fake := routes.SchemeInfo{Name: "weirfake", Destination: true, Modes: []routes.Mode{routes.ModeAppend}}
	describe := func(s string) (routes.SchemeInfo, bool) {
		if s == fake.Name {
			return fake, true
		}
		return routes.Describe(s)
	}
	if p := registryProblems(append(routes.Schemes(), fake.Name, "weirbare"), describe); len(p) != 2 ||
		!strings.Contains(p[0]+p[1], `"weirfake" has no fixture`) || !strings.Contains(p[0]+p[1], `"weirbare" is registered without`) {
		t.Errorf("a made-up registration is not caught: %q", p)
	}
}

func registryProblems(schemes []string, describe func(string) (routes.SchemeInfo, bool)) []string {
	var out []string
	for _, s := range schemes {
		info, ok := describe(s)
		switch {
		case slices.Contains(testOnlySchemes, s):
		case !ok:
			out = append(out, fmt.Sprintf("%q is registered without a description (routes.RegisterScheme)", s))
		case info.AliasOf != "":
			if _, ok := describe(info.AliasOf); !ok {
				out = append(out, fmt.Sprintf("%q is an alias of %q, which is not registered", s, info.AliasOf))
			}
		case fixtures[s] == nil:
			out = append(out, fmt.Sprintf("%q has no fixture in routes_matrix_test.go: add one, so the matrix runs its cells", s))
		}
	}
	return out
}

func checkPair(t *testing.T, r routes.Route) {
	if slices.Contains(routes.StreamSources, r.Source) {
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
		routestest.RunCell(t, sf(t), df(t), caps(r.Destination), transferFunc)
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
	b.WriteString("# Routes\n\nGenerated from the registered schemes (`routes.RegisterScheme`) and `routes/matrix.go` by `go test -run TestRoutesDoc -update`;\n`weir routes --all` prints the same.\n")
	b.WriteString("Every implemented pair is exercised by `TestRoutesMatrix` against real servers (replace, replace again,\n")
	b.WriteString("empty source keeps the table, append past the watermark where supported, a held lock refuses a second run,\nan aborted stage leaves the old table).\n")
	b.WriteString("Stream sources (sse, ws, kafka, pubsub) are exercised by a stream task instead (stream_matrix_test.go: two\n")
	b.WriteString("available_now runs with merge and a contract against an in-process protocol peer; the crash cases are in\nrunner/stream_test.go, see docs/streams.md).\n\n")
	b.WriteString("| source | destination | status |\n|---|---|---|\n")
	for _, r := range routes.Matrix() {
		status := "implemented"
		if !r.Implemented {
			status = "deferred: " + r.Reason
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.Source, r.Destination, status)
	}
	b.WriteString(destRule)
	return b.String()
}

// destRule is routes.DestRef in words, after the matrix.
const destRule = `
## Where a table lands

One rule (` + "`routes.DestRef`" + `) for every path that writes: ` + "`weir transfer`" + ` with ` + "`--table`" + `,
` + "`--tables`" + ` or ` + "`--schema`" + `, dagfile transfer tasks, and log_based replicas and changelogs.

1. The name is ` + "`--dest-table`" + `'s (dagfile ` + "`dest_table:`" + `) when given, else the source table's.
2. The schema is ` + "`--dest-schema`" + ` (dagfile ` + "`schema:`" + `) when given, else the one ` + "`--dest-table`" + ` names.
3. Else, on **MySQL/MariaDB and ClickHouse**, the database in the destination URL
   (` + "`mysql://…/shop`" + ` → ` + "`shop.<table>`" + `). A ClickHouse URL without one means ` + "`default`" + `; a MySQL
   URL without one is refused (exit 2): add the database to the URL or pass ` + "`--dest-schema`" + `.
4. Else the source's schema: PostgreSQL, Iceberg, BigQuery and the object stores keep it
   (` + "`public.orders`" + ` → ` + "`public.orders`" + `); an unqualified ` + "`--dest-table`" + ` on PostgreSQL is
   created in the server's ` + "`current_schema()`" + ` (log_based: in the source's schema).

A database (schema) that does not exist is created; a user who may not create it is bad input
(exit 2) with a hint: name an existing one, or create it first.

**Changed:** before, rule 3 did not exist: a table landed in the database named like its source's
schema, so ` + "`weir transfer postgres://… mysql://…/shop --table public.x`" + ` created a database
` + "`public`" + `. A run that relied on that now writes into the URL's database: pass
` + "`--dest-schema`" + ` (dagfile ` + "`schema:`" + `) to keep the old place.
`
