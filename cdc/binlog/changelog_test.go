package binlog

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// logStep is one source transaction of the changelog workload and the ops
// (as "op key") it must append, in order.
type logStep struct {
	sql string
	ops []string
}

func (e *env) logSteps(steps []logStep) []string {
	e.t.Helper()
	var want []string
	for _, s := range steps {
		e.exec(s.sql)
		want = append(want, s.ops...)
	}
	return want
}

func (e *env) logOps(withBaseline bool) []string {
	e.t.Helper()
	return e.dst.LogOps(e.t, e.ctx, "items", "id", withBaseline)
}

func (e *env) assertLog(step string, want []string) {
	e.t.Helper()
	if got := e.logOps(false); !slices.Equal(got, want) {
		e.t.Fatalf("%s: log ops\n got %v\nwant %v", step, got, want)
	}
}

// assertCurrent: the __current view equals the source (ordered hash).
func (e *env) assertCurrent(step string) {
	e.t.Helper()
	s := e.srcHash()
	var d string
	if e.dst.Kind == "iceberg" { // no view: the documented SQL, run by DuckDB
		d = e.dst.CurrentHash(e.t, e.ctx, "items", exprs["iceberg"], []string{"id"})
	} else {
		d = e.dst.Hash(e.t, e.ctx, "items"+cdc.CurrentSuffix, exprs[e.dst.Kind], "id")
	}
	if s != d {
		e.t.Fatalf("%s: items%s %s != source %s", step, cdc.CurrentSuffix, d, s)
	}
}

func TestChangelog(t *testing.T) {
	// flush 2: the ops stream into the open transaction two at a time.
	for _, kind := range destinations {
		for _, flush := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s/flush %d", kind, flush), func(t *testing.T) {
				if flush > 0 {
					old := cdc.FlushChanges
					cdc.FlushChanges = flush
					t.Cleanup(func() { cdc.FlushChanges = old })
				}
				changelog(t, setup(t, kind))
			})
		}
	}
}

func changelog(t *testing.T, e *env) {
	e.cfg.Changelog = true
	tbl := e.src.Table("items")
	// Written after the coordinate, before the load: in the baseline
	// already, and replayed from the binlog as ops by the next run.
	var want []string
	setFailpoint(t, func(stage string) error {
		if stage == "bootstrap-copy" {
			want = e.logSteps([]logStep{
				{`INSERT INTO ` + tbl + ` (id, name) VALUES (100, 'during')`, []string{"I 100"}},
				{`UPDATE ` + tbl + ` SET name = 'during' WHERE id = 2`, []string{"U 2"}},
				{`UPDATE ` + tbl + ` SET id = 1000 WHERE id = 7`, []string{"D 7", "U 1000"}},
				{`DELETE FROM ` + tbl + ` WHERE id = 20`, []string{"D 20"}},
			})
		}
		return nil
	})
	if res := e.run(); !res.Bootstrap || res.Rows != 40 {
		t.Fatalf("bootstrap = %+v, want 40 rows", res)
	}
	setFailpoint(t, nil)
	base := e.logOps(true)
	if len(base) != 40 || !slices.Contains(base, "B 1000") || slices.Contains(base, "B 7") {
		t.Fatalf("baseline = %v, want the 40 rows the load read", base)
	}
	e.run()
	e.assertLog("replayed writes of the bootstrap", want)
	e.assertCurrent("replayed writes of the bootstrap")

	want = append(want, e.logSteps([]logStep{
		{`INSERT INTO ` + tbl + ` (id, name, color, flags) VALUES (101, 'new', 'blue', 'b'), (102, 'new2', NULL, '')`, []string{"I 101", "I 102"}},
		{`UPDATE ` + tbl + ` SET name = 'x', color = 'red' WHERE id = 3`, []string{"U 3"}},
		{`UPDATE ` + tbl + ` SET id = 2003 WHERE id = 3`, []string{"D 3", "U 2003"}},
		{`BEGIN; UPDATE ` + tbl + ` SET n = 0 WHERE id = 4; DELETE FROM ` + tbl + ` WHERE id = 5; INSERT INTO ` + tbl + ` (id, name) VALUES (600, 'tx'); COMMIT`,
			[]string{"U 4", "D 5", "I 600"}},
		{`INSERT INTO ` + tbl + ` (id, name, big) VALUES (500, 'wide', REPEAT('x', 100000))`, []string{"I 500"}},
		{`DELETE FROM ` + tbl + ` WHERE id = 1`, []string{"D 1"}},
		{`INSERT INTO ` + tbl + ` (id, name) VALUES (1, 'again')`, []string{"I 1"}},
	})...)
	if res := e.run(); res.Appended != 11 {
		t.Errorf("run = %+v, want 11 ops appended", res)
	}
	e.assertLog("after the workload", want)
	e.assertCurrent("after the workload")
	// binlog_row_image=FULL: a delete carries the whole old row.
	if got := e.deletesWithoutName(); got != "0" {
		t.Errorf("%s deletes lack the old row's name", got)
	}

	// A failure inside the apply leaves the log as it was; the re-run
	// appends the window once.
	want = append(want, e.logSteps([]logStep{
		{`TRUNCATE TABLE ` + tbl, []string{"T "}},
		{`INSERT INTO ` + tbl + ` (id, name) VALUES (1, 'after truncate'), (2, 'b')`, []string{"I 1", "I 2"}},
		{`UPDATE ` + tbl + ` SET name = 'B' WHERE id = 2`, []string{"U 2"}},
	})...)
	before := e.logOps(true)
	t.Cleanup(func() { routes.SetCheckpointHook(nil) })
	for _, stage := range []string{"after-append", "before-state", "before-commit"} {
		routes.SetCheckpointHook(func(s string) error {
			if s == "apply-"+stage {
				return errors.New("injected failure")
			}
			return nil
		})
		if _, err := Run(e.ctx, e.cfg); err == nil || !strings.Contains(err.Error(), "injected") {
			t.Fatalf("run failing at %s = %v, want the injected failure", stage, err)
		}
		routes.SetCheckpointHook(nil)
		if got := e.logOps(true); !slices.Equal(got, before) {
			t.Fatalf("failure at %s changed the log", stage)
		}
	}
	if res := e.run(); res.Truncates != 1 || res.Appended != 4 {
		t.Errorf("re-run = %+v, want 4 ops, 1 truncate", res)
	}
	e.assertLog("after the re-run", want)
	e.assertCurrent("after truncate")
	if res := e.run(); res.Appended != 0 {
		t.Errorf("idle run = %+v, want nothing appended", res)
	}
	e.assertLog("after an idle run", want)
}

// TestChangelog_KilledInApply: SIGKILL with the ops appended but not
// committed leaves the log as it was; the next run appends the same ops
// once.
func TestChangelog_KilledInApply(t *testing.T) {
	for _, kind := range destinations {
		t.Run(kind, func(t *testing.T) {
			e := setup(t, kind)
			e.cfg.Changelog = true
			e.run()
			tbl := e.src.Table("items")
			want := e.logSteps([]logStep{
				{`UPDATE ` + tbl + ` SET id = 1000 WHERE id = 7`, []string{"D 7", "U 1000"}},
				{`TRUNCATE TABLE ` + tbl, []string{"T "}},
				{`INSERT INTO ` + tbl + ` (id, name) VALUES (5, 'post')`, []string{"I 5"}},
			})
			before := e.logOps(true)
			killChildAt(t, e.cfg, "apply-before-commit")
			if got := e.logOps(true); !slices.Equal(got, before) {
				t.Fatalf("killed append changed the log")
			}
			e.runOK()
			e.assertLog("re-run after the kill", want)
			e.assertCurrent("re-run after the kill")
		})
	}
}

// deletesWithoutName counts the log's D rows without the old row's name.
func (e *env) deletesWithoutName() string {
	e.t.Helper()
	if e.dst.Kind == "iceberg" {
		n := 0
		for _, r := range e.dst.Rows(e.t, e.ctx, "items", []string{cdc.ColOp, "name"}) {
			if r == "D|"+`\N` {
				n++
			}
		}
		return fmt.Sprint(n)
	}
	q := fmt.Sprintf(`SELECT count(*) FROM %s WHERE _weir_op = 'D' AND name IS NULL`, e.dst.Table("items"))
	return e.dst.Query(e.t, e.ctx, q)
}
