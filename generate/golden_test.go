package generate

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weirhq/weir/dagfile"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenCase is a dagfile rendered with some options into testdata/golden/<name>.
type goldenCase struct {
	name    string
	path    string // the dagfile, relative to this package
	opts    Options
	targets []string
}

// goldenCases are the dagfiles of the golden set. examples/quickstart joins
// it once it exists (run go test ./generate -update to add its files).
func goldenCases() []goldenCase {
	// As if run from the repository's root: weir generate … -o dags.
	medallion := Options{OutDir: "../dags"}
	kube := medallion
	kube.Operator, kube.Image, kube.DagfilePath = OperatorKubernetes, "weir:1.0", "/weir/weir.yaml"
	gold := medallion
	gold.Select = []string{"tag:gold,tag:export"}
	cases := []goldenCase{
		{"medallion", "../examples/medallion/weir.yaml", medallion, Targets},
		{"medallion-kubernetes", "../examples/medallion/weir.yaml", kube, []string{"airflow"}},
		{"medallion-gold", "../examples/medallion/weir.yaml", gold, Targets},
		{"quickstart", "testdata/quickstart/weir.yaml", Options{DagfilePath: "weir.yaml", OutDir: "dags"}, Targets},
		{"deploy", "testdata/deploy/weir.yaml", Options{Operator: OperatorKubernetes, OutDir: "dags"}, []string{"airflow", "argo"}},
		{"backfill", "testdata/backfill/weir.yaml", Options{DagfilePath: "weir.yaml", OutDir: "dags"}, Targets},
		{"backfill-kubernetes", "testdata/backfill/weir.yaml", Options{Operator: OperatorKubernetes, DagfilePath: "/weir/weir.yaml", OutDir: "dags"}, []string{"airflow"}},
	}
	if _, err := os.Stat("../examples/quickstart/weir.yaml"); err == nil {
		cases = append(cases, goldenCase{"examples-quickstart", "../examples/quickstart/weir.yaml",
			Options{OutDir: "../dags"}, Targets})
	}
	return cases
}

// renderCase loads a case's dagfile and renders every target of it.
func renderCase(t *testing.T, c goldenCase) (*dagfile.File, map[string][]byte) {
	t.Helper()
	f, err := dagfile.LoadStatic(c.path)
	if err != nil {
		t.Fatal(err)
	}
	all := map[string][]byte{}
	for _, target := range c.targets {
		files, err := Render(target, f, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		for name, data := range files {
			all[name] = data
		}
	}
	return f, all
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			_, files := renderCase(t, c)
			dir := filepath.Join("testdata", "golden", c.name)
			if *update {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				if _, err := Write(dir, files); err != nil {
					t.Fatal(err)
				}
			}
			compareDir(t, dir, files)
		})
	}
}

// compareDir checks that dir holds exactly files.
func compareDir(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%v (run go test ./generate -update to write the golden files)", err)
	}
	var have, want []string
	for _, e := range entries {
		have = append(have, e.Name())
	}
	for name, data := range files {
		want = append(want, name)
		golden, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil && !bytes.Equal(golden, data) {
			t.Errorf("%s differs from %s/%s (run go test ./generate -update and review the diff)", name, dir, name)
		}
	}
	slices.Sort(want)
	if !slices.Equal(have, want) {
		t.Errorf("golden files %v, rendered %v (run go test ./generate -update)", have, want)
	}
}

func TestRender_Deterministic(t *testing.T) {
	c := goldenCases()[0]
	_, a := renderCase(t, c)
	_, b := renderCase(t, c)
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between two renders", name)
		}
	}
}
