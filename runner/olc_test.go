package runner

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/routes"
)

// olcRun checks the JSON lines input against the OLC contract text through
// the model path of the contract engine; refs are views (name → JSON lines).
// It returns the good rows and the quarantined rows (as canonical JSON,
// sorted; quarantined rows with their _weir_reason only) and the report.
func olcRun(t *testing.T, contract, input string, refs map[string]string) (good, bad []string, rep *Report, err error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.olc.yaml")
	os.WriteFile(path, []byte(contract), 0o644)
	c, err := dagfile.LoadContract(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	db, err := duck.Open(ctx, duck.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	write := func(name, text string) string {
		p := filepath.Join(dir, name+".jsonl")
		os.WriteFile(p, []byte(strings.TrimSpace(text)+"\n"), 0o644)
		return "read_json_auto(" + duck.Literal(p) + ")"
	}
	for name, text := range refs {
		if err := db.Exec(ctx, "CREATE VIEW "+duck.Ident(name)+" AS SELECT * FROM "+write(name, text)); err != nil {
			t.Fatal(err)
		}
	}
	rep = &Report{RunID: "run1"}
	run := &modelRun{r: &Runner{opts: Options{Log: testLog{t}}}, t: &dagfile.Task{Name: "t", Contract: c},
		m: &dagfile.Model{}, rep: rep, db: db, mode: routes.ModeAppend}
	if m := c.Materialization; m != nil && m.Strategy == "merge" {
		run.mode, run.m.Key = routes.ModeMerge, m.Key
	}
	chk, err := run.checkContract(ctx, c, "SELECT * FROM "+write("input", input))
	if err != nil {
		return nil, nil, rep, err
	}
	good = jsonRows(t, db, chk.goodSQL, nil)
	bad = jsonRows(t, db, "SELECT * EXCLUDE (_weir_run) FROM ("+chk.badSQL+")", nil)
	return good, bad, rep, nil
}

const olcHead = "version: 1.0.0\ninfo: {title: T}\n"

// TestOLC_RowRules: every row-rule form (shorthands, field-level rules,
// phases) quarantines the rows it should, once, with every reason.
func TestOLC_RowRules(t *testing.T) {
	contract := olcHead + `model:
  fields:
    - {name: id, type: integer, required: true}
    - {name: email, type: string, max_length: 8}
    - {name: n, type: int, min: 0, max: 10}
    - {name: kind, type: string, accepted_values: [a, b], rules: [{name: kind_lower, sql: "kind = lower(kind)"}]}
    - {name: seen, type: timestamp}
    - {name: score, type: double, nullable: false}
quality:
  row_rules:
    - not_null: email
    - not_null: {fields: [kind, seen], name: kind_and_seen}
    - regex_match: {field: email, pattern: "^[a-z]+@"}
    - range: {field: score, min: 0, max: 1, inclusive: false}
    - lifecycle_window: {field: seen, window: 3650d}
    - {name: n_even, sql: "n % 2 = 0", phase: pre}
`
	input := `
{"id": 1, "email": "a@x.io", "n": 2, "kind": "a", "seen": "2025-06-01 00:00:00", "score": 0.5}
{"id": 2, "email": "toolong@x.io", "n": 2, "kind": "a", "seen": "2025-06-01 00:00:00", "score": 0.5}
{"id": 3, "email": "a@x.io", "n": 11, "kind": "c", "seen": "2025-06-01 00:00:00", "score": 0.5}
{"id": 4, "email": null, "n": 4, "kind": "A", "seen": null, "score": 1}
{"id": 5, "email": "B@x.io", "n": 3, "kind": "b", "seen": "1990-01-01 00:00:00", "score": null}
{"id": null, "email": "a@x.io", "n": "x", "kind": "a", "seen": "2025-06-01 00:00:00", "score": 0}
`
	good, bad, rep, err := olcRun(t, contract, input, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`{"email":"a@x.io","id":1,"kind":"a","n":2,"score":0.5,"seen":"2025-06-01 00:00:00"}`}; !slices.Equal(good, want) {
		t.Errorf("good:\n%s", strings.Join(good, "\n"))
	}
	want := map[string]string{
		"2": "max_length(email)",
		"3": "range(n); accepted_values(kind); n_even",
		"4": "accepted_values(kind); kind_lower; not_null(email); kind_and_seen; range(score)",
		"5": "required(score); regex(email); lifecycle_window(seen); n_even",
		"":  "required(id); type(n): not BIGINT; range(score)",
	}
	got := map[string]string{}
	for _, row := range bad {
		id := strings.TrimPrefix(strings.SplitN(row, `"id":`, 2)[1], "")
		id, _, _ = strings.Cut(id, ",")
		if id == "null" {
			id = ""
		}
		_, reason, _ := strings.Cut(row, `"_weir_reason":"`)
		reason, _, _ = strings.Cut(reason, `"`)
		got[id] = reason
	}
	if !maps.Equal(got, want) {
		t.Errorf("reasons by id:\n%v\nwant\n%v", got, want)
	}
	wantRules := map[string]int64{"max_length(email)": 1, "range(n)": 1, "accepted_values(kind)": 2, "kind_lower": 1,
		"not_null(email)": 1, "kind_and_seen": 1, "range(score)": 2, "required(score)": 1, "regex(email)": 1,
		"lifecycle_window(seen)": 1, "n_even": 2, "required(id)": 1, "type(n)": 1}
	if !maps.Equal(rep.Contract.Rules, wantRules) || rep.Contract.Broken != 5 || rep.Contract.Checked != 6 {
		t.Errorf("contract %+v, want rules %v", rep.Contract, wantRules)
	}
}

// TestOLC_DatasetRules: each dataset rule kind is judged over the good rows
// and quarantines nothing; fail_pipeline_on_dataset_error fails the run
// for a failed error rule only.
func TestOLC_DatasetRules(t *testing.T) {
	rules := `
    - {name: u_id, unique: id}
    - {name: u_pair, unique: {fields: [id, k]}}
    - {null_ratio: {field: k, max: 0.2}}
    - {name: rows, row_count_between: {min: 1, max: 3}}
    - {name: total, sql: "SELECT sum(v) FROM source", must_be_between: [0, 100]}
    - {name: total_gt, sql: "SELECT sum(v) FROM source", must_be_greater_than: 100}
    - {name: all_small, sql: "SELECT bool_and(v < 50) FROM source", severity: warning}
`
	contract := func(fail bool) string {
		s := olcHead + "model:\n  fields:\n    - {name: id, type: integer}\n    - {name: k, type: string}\n    - {name: v, type: integer, min: 0}\n"
		if fail {
			s += "quality:\n  fail_pipeline_on_dataset_error: true\n  dataset_rules:" + rules
		} else {
			s += "quality:\n  dataset_rules:" + rules
		}
		return s
	}
	input := `
{"id": 1, "k": "a", "v": 10}
{"id": 1, "k": null, "v": 60}
{"id": null, "k": "b", "v": 30}
{"id": null, "k": "b", "v": 5}
{"id": 9, "k": "z", "v": -1}
`
	good, bad, rep, err := olcRun(t, contract(false), input, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(good) != 4 || len(bad) != 1 || rep.Contract.Broken != 1 || rep.Contract.Passed {
		t.Fatalf("good %d bad %d contract %+v", len(good), len(bad), rep.Contract)
	}
	want := []string{"u_id false 2", "u_pair false 0", "null_ratio(k) false 0.25", "rows false 4", "total false 105", "total_gt true 105", "all_small false false"}
	var got []string
	for _, o := range rep.Contract.DatasetRules {
		got = append(got, o.Name+" "+map[bool]string{true: "true", false: "false"}[o.Passed]+" "+o.Value)
	}
	want[1] = "u_pair true 0" // NULL keys are distinct
	if !slices.Equal(got, want) {
		t.Errorf("dataset rules:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, _, _, err := olcRun(t, contract(true), input, nil); err == nil || !strings.Contains(err.Error(), "u_id (value 2)") || strings.Contains(err.Error(), "all_small") {
		t.Errorf("fail_pipeline_on_dataset_error: %v", err)
	}
}

// TestOLC_Transformations: the ops the conformance cases leave out, in
// both phases; a post op that makes several rows of one, one of which
// breaks a post rule, quarantines the row once and sends none of them on.
func TestOLC_Transformations(t *testing.T) {
	contract := olcHead + `model:
  fields:
    - {name: id, type: integer, required: true}
    - {name: name, type: string}
    - {name: code, type: string}
    - {name: seg_label, type: string}
    - {name: seg_tier, type: integer}
    - {name: day, type: date}
    - {name: n, type: integer}
transformations:
  - {phase: pre, rename: {mappings: {ident: id, nm: name}}}
  - {phase: pre, filter: {sql: "id <> 99"}}
  - {phase: pre, trim: {fields: [name], side: left}}
  - {phase: pre, upper: {fields: [code]}}
  - {phase: pre, cast: {columns: {n: int}}}
  - {phase: pre, deduplicate: {"on": [id], sort_by: [n], order: desc}}
  - {phase: pre, sql: "SELECT * EXCLUDE (junk) FROM source"}
  - {phase: post, join: {reference: segs, "on": code, key: code, fields: [label, tier], type: inner, prefix: seg_, defaults: {label: none}}}
  - {phase: post, date_range_explode: {output: day, start_col: d0, end_col: d1, interval: 1d}}
  - {phase: post, select: {columns: [id, name, code, seg_label, seg_tier, day, n]}}
quality:
  row_rules:
    - {name: not_sunday, sql: "dayofweek(day) <> 0", phase: post}
`
	input := `
{"ident": 1, "nm": "  ann ", "code": "a", "n": "5", "d0": "2024-01-05", "d1": "2024-01-06", "junk": 1}
{"ident": 1, "nm": "old", "code": "a", "n": "4", "d0": "2024-01-05", "d1": "2024-01-05", "junk": 1}
{"ident": 2, "nm": "bo", "code": "b", "n": "1", "d0": "2024-01-06", "d1": "2024-01-08", "junk": 1}
{"ident": 3, "nm": "cy", "code": "zz", "n": "1", "d0": "2024-01-01", "d1": "2024-01-01", "junk": 1}
{"ident": 99, "nm": "x", "code": "a", "n": "1", "d0": "2024-01-01", "d1": "2024-01-01", "junk": 1}
`
	segs := map[string]string{"segs": `{"code": "A", "label": null, "tier": 1}
{"code": "B", "label": "bee", "tier": 2}`}
	good, bad, rep, err := olcRun(t, contract, input, segs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"code":"A","day":"2024-01-05","id":1,"n":5,"name":"ann ","seg_label":"none","seg_tier":1}`,
		`{"code":"A","day":"2024-01-06","id":1,"n":5,"name":"ann ","seg_label":"none","seg_tier":1}`,
	}
	if !slices.Equal(good, want) {
		t.Errorf("good:\n%s\nwant:\n%s", strings.Join(good, "\n"), strings.Join(want, "\n"))
	}
	// id 2 spans a Sunday (2024-01-07): quarantined once, none of its days
	// written; id 3 has no segment (inner join): dropped, not quarantined.
	if len(bad) != 1 || !strings.Contains(bad[0], `"id":2`) || !strings.Contains(bad[0], `"_weir_reason":"not_sunday"`) {
		t.Errorf("bad: %v", bad)
	}
	if rep.Contract.Rules["not_sunday"] != 1 || rep.Contract.Broken != 1 || rep.Contract.Checked != 3 {
		t.Errorf("contract %+v", rep.Contract)
	}
}

// TestOLC_Refused: a stream task refuses what only a model runs, and an
// OLC merge conflicts with a model's own mode.
func TestOLC_TaskRefusals(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "c.olc.yaml"), []byte(olcHead+`model:
  fields: [{name: id, type: integer}]
primary_key: [id]
transformations: [{lower: {fields: [id]}}]
quality:
  row_rules: [{name: p, sql: "id > 0", phase: post}]
  dataset_rules: [{unique: id}]
materialization: {strategy: merge}
`), 0o644)
	os.WriteFile(filepath.Join(dir, "weir.yaml"), []byte(`version: 1
connections:
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  s:
    stream: {source: "sse://127.0.0.1:1/x", sink: lake:s.events, materialization: merge, key: [id]}
    contract: c.olc.yaml
  m:
    model: {source: lake:s.events, sink: lake:s.m, mode: append, sql: SELECT * FROM input}
    contract: c.olc.yaml
`), 0o644)
	_, err := dagfile.LoadStatic(filepath.Join(dir, "weir.yaml"))
	for _, want := range []string{
		"transformations are supported on model tasks only", "dataset_rules are supported on model tasks only",
		"a phase post rule is supported on model tasks only", "materialization is supported on model tasks only",
		"materialization.strategy merge means mode upsert, but the model says mode: append",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("load: want %q in %v", want, err)
		}
	}
}

// TestOLC_FailOnQuarantine: quarantine.fail_on_quarantine fails the run on
// one bad row (max_bad_ratio 0), before anything is written.
func TestOLC_FailOnQuarantine(t *testing.T) {
	contract := olcHead + "model:\n  fields: [{name: id, type: integer, min: 0}]\nquarantine: {fail_on_quarantine: %s}\n"
	input := "{\"id\": 1}\n{\"id\": -1}\n{\"id\": 2}\n"
	if _, bad, _, err := olcRun(t, strings.Replace(contract, "%s", "false", 1), input, nil); err != nil || len(bad) != 1 {
		t.Fatalf("fail_on_quarantine false: %v, %d bad", err, len(bad))
	}
	_, _, _, err := olcRun(t, strings.Replace(contract, "%s", "true", 1), input, nil)
	if err == nil || !strings.Contains(err.Error(), "1 of 3 rows") || !strings.Contains(err.Error(), "above max_bad_ratio 0") {
		t.Fatalf("fail_on_quarantine true: %v", err)
	}
}
