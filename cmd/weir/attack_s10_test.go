package main

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestAttackS10_StemCollisionInOneRun: two file sources of one run whose
// stems collide (t.csv and t.csv.gz both land as "t") must not silently
// overwrite one another. They did: --tables '"t.csv","t.csv.gz"'
// --dest-schema S exited 0 reporting "t.csv → S.t: 1 rows" and
// "t.csv.gz → S.t: 1 rows", and S.t held only t.csv.gz's row. Expected:
// bad input (exit 2) naming both files before a row moves, or each kept.
func TestAttackS10_StemCollisionInOneRun(t *testing.T) {
	pg := postgrestest.New(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.csv"), []byte("id,v\n1,from-csv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "t.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	w := gzip.NewWriter(f)
	w.Write([]byte("id,v\n2,from-gz\n"))
	w.Close()
	f.Close()

	code, out := runCmd(t, "transfer", "file://"+dir, pg.URL(), "--tables", `"t.csv","t.csv.gz"`, "--dest-schema", pg.Schema)
	if code == ExitBadInput {
		return // refused: nothing overwritten
	}
	ctx := routestest.Context(t, time.Minute)
	var n int
	if err := pg.Pool.QueryRow(ctx, "SELECT count(*) FROM "+pg.Schema+".t").Scan(&n); err != nil {
		t.Fatalf("exit %d, read %s.t: %v\n%s", code, pg.Schema, err, out)
	}
	if n != 2 {
		t.Fatalf("exit %d and %s.t holds %d row(s): one file's table silently replaced the other's\n%s", code, pg.Schema, n, out)
	}
}

// TestAttackS10_DestSchemaCollisionInOneRun: the same silent overwrite
// without files: two source tables named t in two schemas, moved with
// --dest-schema into one, both "→ S.t", exit 0, and S.t holds the second
// table's row only.
func TestAttackS10_DestSchemaCollisionInOneRun(t *testing.T) {
	a, b, dst := postgrestest.New(t), postgrestest.New(t), postgrestest.New(t)
	ctx := routestest.Context(t, time.Minute)
	for i, f := range []*postgrestest.Fixture{a, b} {
		q := "CREATE TABLE " + f.Schema + ".t (id int PRIMARY KEY); INSERT INTO " + f.Schema + ".t VALUES (" + string(rune('1'+i)) + ")"
		if _, err := f.Pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	code, out := runCmd(t, "transfer", a.URL(), dst.URL(), "--tables", a.Schema+".t,"+b.Schema+".t", "--dest-schema", dst.Schema)
	if code == ExitBadInput {
		return
	}
	var n int
	if err := dst.Pool.QueryRow(ctx, "SELECT count(*) FROM "+dst.Schema+".t").Scan(&n); err != nil {
		t.Fatalf("exit %d, read %s.t: %v\n%s", code, dst.Schema, err, out)
	}
	if n != 2 {
		t.Fatalf("exit %d and %s.t holds %d row(s): one source table silently replaced the other\n%s", code, dst.Schema, n, out)
	}
}

// TestAttackS10_FolderFilesOfTwoTypes: a folder of Parquet files whose
// column types differ (a file from another run, another tool) is bad
// input the run can name: file, column and both types. The message does
// (`column "id" is utf8 in this file, int64 in the table: types differ`)
// but the read exits 1, as a failure worth retrying.
func TestAttackS10_FolderFilesOfTwoTypes(t *testing.T) {
	in, lake := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(in, "ints.csv"), []byte("id\n1\n"), 0o644)
	os.WriteFile(filepath.Join(in, "texts.csv"), []byte("id\nabc\n"), 0o644)
	os.MkdirAll(filepath.Join(lake, "m"), 0o755)
	for _, f := range []string{"ints", "texts"} {
		if code, out := runCmd(t, "read", "file://"+in, "--table", f+".csv", "--to", filepath.Join(lake, "m", f+".parquet")); code != ExitOK {
			t.Fatalf("write %s.parquet: exit %d: %s", f, code, out)
		}
	}
	if code, out := runCmd(t, "read", "file://"+lake, "--table", "m", "--to", filepath.Join(t.TempDir(), "out.csv")); code != ExitBadInput {
		t.Fatalf("a folder of files of two types: exit %d, want %d (bad input naming the file and column)\n%s", code, ExitBadInput, out)
	}
}
