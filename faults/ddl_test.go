package faults_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// ddlDestinations are the destinations the schema-change cases cross
// (s3 and gcs share the file route's code).
var ddlDestinations = []string{"postgres", "mysql", "clickhouse", "file", "iceberg"}

// TestFault_SourceDDL changes the source's columns between two runs: a
// run either fails with an error naming the column, or carries the change
// (replace rebuilds the table; an added column lands with its values).
// What must never happen is exit 0 with the new column's values dropped.
func TestFault_SourceDDL(t *testing.T) {
	for _, d := range destinations {
		if !strings.Contains(strings.Join(ddlDestinations, " "), d.name) {
			continue
		}
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			src := newPG(t)
			dst, dstURL := d.open(t)
			ctx := routestest.Context(t, 4*time.Minute)
			for _, mode := range []string{"append", "replace"} {
				runCase(t, "add column/"+mode, func(t *testing.T) {
					tbl := routestest.Name("a")
					args := ddlSetup(t, ctx, src, dst, dstURL, tbl, mode)
					src.Exec(t, ctx, fmt.Sprintf("ALTER TABLE %s ADD COLUMN extra text", src.Ref(tbl)),
						fmt.Sprintf("INSERT INTO %s (id, extra) SELECT g, 'e' || g FROM generate_series(1001, 1200) g", src.Ref(tbl)))
					r := weirRetry(ctx, t, args...)
					expectNoLoss(t, ctx, r, dstURL, dst.Ref(tbl), 200)
				})
			}
			runCase(t, "drop column/append", func(t *testing.T) {
				tbl := routestest.Name("d")
				args := ddlSetup(t, ctx, src, dst, dstURL, tbl, "append")
				src.Exec(t, ctx, fmt.Sprintf("ALTER TABLE %s DROP COLUMN flag", src.Ref(tbl)),
					fmt.Sprintf("INSERT INTO %s (id, name) SELECT g, 'n' FROM generate_series(1001, 1200) g", src.Ref(tbl)))
				r := weirRetry(ctx, t, args...)
				if r.code != 0 {
					expectColumnError(t, r, "flag")
					return
				}
				t.Logf("%s append after a dropped column: exit 0", d.name)
				got, _ := dst.Read(t, ctx, tbl)
				if len(got) != 1200 {
					t.Fatalf("destination has %d rows, want 1200", len(got))
				}
				for _, row := range got[:1000] { // rows loaded before keep their flag
					if want := routestest.Rows(row.ID, row.ID)[0]; row.String() != want.String() {
						t.Fatalf("an old row changed: %s, want %s", row, want)
					}
				}
			})
		})
	}
}

// ddlSetup loads rows 1..1000 with mode and returns the transfer's args.
func ddlSetup(t *testing.T, ctx context.Context, src *postgrestest.Fixture, dst routestest.Fixture, dstURL, tbl, mode string) []string {
	t.Helper()
	src.Create(t, ctx, tbl, routestest.Rows(1, 1000))
	args := []string{"transfer", src.URL(), dstURL, "--table", src.Ref(tbl), "--dest-table", dst.Ref(tbl), "--mode", mode}
	mustWeir(ctx, t, args...)
	return args
}

// expectNoLoss: a failed run names the column; a run that succeeded
// landed every value of the added column.
func expectNoLoss(t *testing.T, ctx context.Context, r result, dstURL, table string, want int) {
	t.Helper()
	if r.code != 0 {
		expectColumnError(t, r, "extra")
		return
	}
	t.Logf("exit 0: %s", errorLine(r.stderr))
	read := weir(ctx, t, nil, "read", dstURL, "--table", table, "--columns", "id,extra", "--where", "extra IS NOT NULL")
	if read.code != 0 {
		t.Fatalf("the run said it succeeded but the destination has no column extra (silent loss): %s", read)
	}
	lines := strings.Split(strings.TrimSpace(read.stdout), "\n")
	if got := len(lines) - 1; got != want { // minus the header
		t.Fatalf("the destination holds %d values of the added column, want %d", got, want)
	}
}

func expectColumnError(t *testing.T, r result, column string) {
	t.Helper()
	line := errorLine(r.stderr)
	t.Logf("exit %d: %s", r.code, line)
	if r.code != 1 && r.code != 2 || !strings.Contains(line, column) {
		t.Fatalf("want a clear error naming column %s, got %s", column, r)
	}
}

// TestFault_SourceDDLMidRun alters the source while a run is paused
// mid-copy. Whether the ALTER waits depends on whether the source's COPY
// statement has ended (a small table is in flight already); either way the
// run lands the columns it probed, or fails naming the column, and the
// next run treats the change like one made between runs.
func TestFault_SourceDDLMidRun(t *testing.T) {
	t.Parallel()
	src, dst := newPG(t), newPG(t)
	ctx := routestest.Context(t, 3*time.Minute)
	for _, ddl := range []string{"ADD COLUMN extra text", "DROP COLUMN flag"} {
		runCase(t, strings.ToLower(strings.Fields(ddl)[0])+" column mid-copy", func(t *testing.T) {
			tbl := routestest.Name("m")
			args := append(ddlSetup(t, ctx, src, dst, dst.URL(), tbl, "append"), "--no-passthrough", "--chunk-bytes", "16384")
			src.Insert(t, ctx, tbl, routestest.Rows(1001, 4000))
			before := rowsOf(t, ctx, src, tbl)
			run := startPaused(ctx, t, "mid-copy", args...)
			altered := make(chan error, 1)
			go func() {
				_, err := src.Pool.Exec(ctx, fmt.Sprintf("ALTER TABLE %s %s", src.Ref(tbl), ddl))
				altered <- err
			}()
			waited := true
			select {
			case err := <-altered:
				waited = false
				altered <- err
			case <-time.After(time.Second):
			}
			t.Logf("the ALTER waited for the paused run: %v", waited)
			r := run.goOn(t)
			if err := <-altered; err != nil {
				t.Fatal(err)
			}
			if r.code != 0 {
				expectColumnError(t, r, strings.Fields(ddl)[2])
			} else if got := rowsOf(t, ctx, dst, tbl); got != before {
				t.Fatal("the run that overlapped the ALTER did not land the table as it was when it started")
			}
			if strings.HasPrefix(ddl, "ADD") {
				src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s (id, extra) SELECT g, 'e' FROM generate_series(4001, 4100) g", src.Ref(tbl)))
				expectNoLoss(t, ctx, weir(ctx, t, nil, args...), dst.URL(), dst.Ref(tbl), 100)
				return
			}
			src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s (id) SELECT g FROM generate_series(4001, 4100) g", src.Ref(tbl)))
			if r := weir(ctx, t, nil, args...); r.code != 0 {
				expectColumnError(t, r, "flag")
			}
		})
	}
}
