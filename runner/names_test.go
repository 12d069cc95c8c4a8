package runner

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
)

// TestRunner_IcebergSinkWrittenCollision: a model whose result has two
// columns, or a struct column two fields, Iceberg writes into its data
// files under one name ("a.b" and "a_x2Eb") is refused by an Iceberg sink as bad input naming both, in
// each sink mode, and the sink table is not created (a model's sink
// prepares through the route like a transfer).
func TestRunner_IcebergSinkWrittenCollision(t *testing.T) {
	sqls := map[string]string{
		"columns":         `SELECT id, amount AS "a.b", amount AS "a_x2Eb" FROM input`,
		"struct's fields": `SELECT id, {'a.b': amount, 'a_x2Eb': amount} AS s FROM input`,
	}
	for _, mode := range []string{"replace", "append", "upsert"} {
		for what, sql := range sqls {
			t.Run(mode+"/"+what, func(t *testing.T) {
				dir := t.TempDir()
				body := `version: 1
connections:
  files: file://./data
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  m:
    model:
      source: files:orders.csv
      sink: lake:silver.m
      mode: ` + mode + `
      key: [id]
      sql: "` + strings.ReplaceAll(sql, `"`, `\"`) + `"
`
				switch mode {
				case "replace":
					body = strings.Replace(body, "      key: [id]\n", "", 1)
				case "append":
					body = strings.Replace(body, "      key: [id]\n", "      cursor: id\n", 1)
				default:
					body = strings.Replace(body, "      key: [id]\n", "      key: [id]\n      cursor: id\n", 1)
				}
				path := filepath.Join(dir, "weir.yaml")
				writeFile(t, path, body)
				if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(dir, "data", "orders.csv"), "id,amount\n1,2.50\n2,3.00\n")
				r, err := Load(path, Options{Log: testLog{t}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { r.Close() })
				_, err = r.Once(testContext(t), "m")
				t.Log(err)
				if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), `"a.b"`) || !strings.Contains(err.Error(), `"a_x2Eb"`) {
					t.Fatalf("%v, want bad input (exit 2) naming columns a.b and a_x2Eb", err)
				}
				filepath.WalkDir(filepath.Join(dir, "lake"), func(p string, e fs.DirEntry, err error) error {
					if err == nil && !e.IsDir() && !strings.HasPrefix(e.Name(), "catalog.db") {
						t.Errorf("refused, yet the lake has %s", p)
					}
					return nil
				})
			})
		}
	}
}
