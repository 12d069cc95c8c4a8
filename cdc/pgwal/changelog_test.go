package pgwal

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
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

// runOK is run with runRetry.
func (e *env) runOK() Result {
	e.t.Helper()
	res, err := e.runRetry()
	if err != nil {
		e.t.Fatalf("run: %v", err)
	}
	return res
}

// runRetry runs while the slot is still active for the walsender of the
// run before (SQLSTATE 55006): a run that failed just now can hold it for
// a moment.
func (e *env) runRetry() (Result, error) {
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		res, err := Run(e.ctx, e.cfg)
		busy := err != nil && (strings.Contains(err.Error(), "is active") || errors.Is(err, routes.ErrLocked))
		if !busy || time.Now().After(deadline) {
			return res, err
		}
	}
}

func (e *env) logOps(withBaseline bool) []string {
	e.t.Helper()
	return e.ddb.LogOps(e.t, e.ctx, e.dst.Name, "id", withBaseline)
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
	s := e.hash(e.src)
	var d string
	if e.ddb.Kind == "iceberg" { // no view: the documented SQL, run by DuckDB
		d = e.ddb.CurrentHash(e.t, e.ctx, e.dst.Name, columns, []string{"id"})
	} else {
		d = e.ddb.Hash(e.t, e.ctx, e.dst.Name+cdc.CurrentSuffix, columns, "id")
	}
	if s != d {
		e.t.Fatalf("%s: %s%s %s != source %s", step, e.dst.Name, cdc.CurrentSuffix, d, s)
	}
}

func TestChangelog(t *testing.T) {
	// flush 2: the ops stream into the open transaction two at a time, so
	// fills and key changes cross Append calls.
	tests := []struct {
		identity string
		flush    int
	}{{"DEFAULT", 0}, {"FULL", 0}, {"DEFAULT", 2}}
	for _, kind := range destinations {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/identity %s/flush %d", kind, tt.identity, tt.flush), func(t *testing.T) {
				setFlush(t, tt.flush)
				changelog(t, setupTo(t, kind), tt.identity)
			})
		}
	}
}

// setFlush sets cdc.FlushChanges for one test (0: the default).
func setFlush(t *testing.T, n int) {
	if n == 0 {
		return
	}
	old := cdc.FlushChanges
	cdc.FlushChanges = n
	t.Cleanup(func() { cdc.FlushChanges = old })
}

func changelog(t *testing.T, e *env, identity string) {
	e.cfg.Changelog = true
	src := ident(e.src)
	e.exec(`ALTER TABLE ` + src + ` REPLICA IDENTITY ` + identity)
	other, err := pgx.Connect(e.ctx, e.cfg.SourceURL)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(e.ctx)
	// Written after the slot's snapshot, before the copy: not in the
	// baseline, in the log as ops.
	setFailpoint(t, func(stage string) error {
		if stage != "bootstrap-copy" {
			return nil
		}
		_, err := other.Exec(e.ctx, `INSERT INTO `+src+` VALUES (900, 'during', 1, NULL);
UPDATE `+src+` SET name = 'during' WHERE id = 2; DELETE FROM `+src+` WHERE id = 3`)
		return err
	})
	if res := e.runOK(); !res.Bootstrap || res.Rows != 50 {
		t.Fatalf("bootstrap = %+v, want 50 rows", res)
	}
	setFailpoint(t, nil)
	base := e.logOps(true)
	if len(base) != 50 || !slices.Contains(base, "B 3") || slices.Contains(base, "B 900") {
		t.Fatalf("baseline = %v, want B 1 … B 50 (the snapshot's rows)", base)
	}
	// The three statements above ran as one transaction.
	want := []string{"I 900", "U 2", "D 3"}
	e.runOK()
	e.assertLog("writes during the bootstrap", want)
	e.assertCurrent("writes during the bootstrap")

	want = append(want, e.logSteps([]logStep{
		{`INSERT INTO ` + src + ` VALUES (51, 'new', 1, NULL), (52, 'new', 2, 'b')`, []string{"I 51", "I 52"}},
		{`UPDATE ` + src + ` SET name = 'x' WHERE id = 4`, []string{"U 4"}},
		{`UPDATE ` + src + ` SET id = 1000 WHERE id = 7`, []string{"D 7", "U 1000"}},
		{`DELETE FROM ` + src + ` WHERE id = 20`, []string{"D 20"}},
		{`INSERT INTO ` + src + ` VALUES (500, 'wide', 1, ` + bigText + `)`, []string{"I 500"}},
		{`BEGIN; UPDATE ` + src + ` SET n = 0 WHERE id = 5; DELETE FROM ` + src + ` WHERE id = 6; INSERT INTO ` + src + ` VALUES (600, 'tx', 6, NULL); COMMIT`,
			[]string{"U 5", "D 6", "I 600"}},
		{`DELETE FROM ` + src + ` WHERE id = 1`, []string{"D 1"}},
		{`INSERT INTO ` + src + ` VALUES (1, 'again', 2, 'x')`, []string{"I 1"}},
		// In the same window as the insert: filled from it.
		{`UPDATE ` + src + ` SET n = 2 WHERE id = 500`, []string{"U 500"}},
	})...)
	if res := e.runOK(); res.Appended != 13 {
		t.Errorf("run = %+v, want 13 ops appended", res)
	}
	e.assertLog("after the workload", want)
	e.assertCurrent("after the workload")

	// The unchanged TOAST value of row 500 comes from the log now,
	// including across a key change.
	want = append(want, e.logSteps([]logStep{
		{`UPDATE ` + src + ` SET n = n + 5 WHERE id = 500`, []string{"U 500"}},
		{`UPDATE ` + src + ` SET id = 502, name = 'moved' WHERE id = 500`, []string{"D 500", "U 502"}},
	})...)
	e.runOK()
	e.assertLog("after the TOAST updates", want)
	e.assertCurrent("after the TOAST updates")
	wantD := "6/0"
	if identity == "FULL" {
		wantD = "6/6"
	}
	if e.ddb.Kind == "iceberg" {
		e.checkLogRows(wantD)
	} else {
		q := fmt.Sprintf(`SELECT concat(count(DISTINCT md5(big)), ':', min(length(big))) FROM %s WHERE id IN (500, 502) AND _weir_op IN ('I', 'U')`, e.ddb.Table(e.dst.Name))
		if e.ddb.Kind == "clickhouse" {
			q = fmt.Sprintf(`SELECT concat(toString(uniqExact(big)), ':', toString(min(length(big)))) FROM %s WHERE id IN (500, 502) AND _weir_op IN ('I', 'U')`, e.ddb.Table(e.dst.Name))
		}
		if got := e.ddb.Query(t, e.ctx, q); !strings.HasPrefix(got, "1:") || len(got) < 6 {
			t.Errorf("wide row versions in the log: %s distinct:min length; want one value > 8 KB", got)
		}
		// A delete carries the key only with REPLICA IDENTITY DEFAULT, the
		// whole old row with FULL.
		q = fmt.Sprintf(`SELECT concat(count(*), '/', count(name)) FROM %s WHERE _weir_op = 'D'`, e.ddb.Table(e.dst.Name))
		if e.ddb.Kind == "clickhouse" {
			q = fmt.Sprintf(`SELECT concat(toString(count()), '/', toString(count(name))) FROM %s WHERE _weir_op = 'D'`, e.ddb.Table(e.dst.Name))
		}
		if got := e.ddb.Query(t, e.ctx, q); got != wantD {
			t.Errorf("deletes/with a name = %s, want %s", got, wantD)
		}
	}

	// A failure inside the apply leaves the log as it was; the re-run
	// appends the window once.
	want = append(want, e.logSteps([]logStep{
		{`TRUNCATE ` + src, []string{"T "}},
		{`INSERT INTO ` + src + ` VALUES (1, 'after truncate', 1, NULL), (2, 'b', 2, NULL)`, []string{"I 1", "I 2"}},
		{`UPDATE ` + src + ` SET name = 'B' WHERE id = 2`, []string{"U 2"}},
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
		if _, err := e.runRetry(); err == nil || !strings.Contains(err.Error(), "injected") {
			t.Fatalf("run failing at %s = %v, want the injected failure", stage, err)
		}
		routes.SetCheckpointHook(nil)
		if got := e.logOps(true); !slices.Equal(got, before) {
			t.Fatalf("failure at %s changed the log", stage)
		}
	}
	res, err := e.runRetry()
	if err != nil || res.Truncates != 1 || res.Appended != 4 {
		t.Errorf("re-run = %+v, %v; want 4 ops, 1 truncate", res, err)
	}
	e.assertLog("after the re-run", want)
	e.assertCurrent("after truncate")
	e.checkConfirmed(e.runOK().To)
	e.assertLog("after an idle run", want)
}

// TestChangelog_KilledInApply: SIGKILL with the ops appended but not
// committed leaves the log as it was; the next run appends the same ops
// once.
func TestChangelog_KilledInApply(t *testing.T) {
	for _, kind := range destinations {
		t.Run(kind, func(t *testing.T) {
			e := setupTo(t, kind)
			e.cfg.Changelog = true
			e.runOK()
			src := ident(e.src)
			want := e.logSteps([]logStep{
				{`UPDATE ` + src + ` SET id = 1000 WHERE id = 7`, []string{"D 7", "U 1000"}},
				{`TRUNCATE ` + src, []string{"T "}},
				{`INSERT INTO ` + src + ` VALUES (5, 'post', 5, ` + bigText + `)`, []string{"I 5"}},
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

// TestChangelog_Rebootstrap: after a lost slot and a reset, the next run
// appends a new baseline; __current starts from it, so a row deleted while
// the slot was lost (no D in the log) is gone from the view.
func TestChangelog_Rebootstrap(t *testing.T) {
	e := setup(t)
	e.cfg.Changelog = true
	e.runOK()
	e.loseSlotThenReset()
	if got := e.logOps(true); len(got) != 100 || len(e.logOps(false)) != 0 {
		t.Fatalf("log = %d rows, want two baselines of 50 and no op", len(got))
	}
	e.assertCurrent("after the re-bootstrap")
}

// TestChangelog_CommittedNotConfirmed: a run that dies after the
// destination committed but before the slot was told re-reads those
// transactions from the slot next time; they are skipped (committed before
// the saved position), so the log holds every op once.
func TestChangelog_CommittedNotConfirmed(t *testing.T) {
	e := setup(t)
	e.cfg.Changelog = true
	e.runOK()
	src := ident(e.src)
	want := e.logSteps([]logStep{
		{`UPDATE ` + src + ` SET name = 'x' WHERE id = 4`, []string{"U 4"}},
		{`DELETE FROM ` + src + ` WHERE id = 5`, []string{"D 5"}},
	})
	setFailpoint(t, func(stage string) error {
		if stage == "confirm" {
			return errors.New("injected: no confirmation")
		}
		return nil
	})
	if _, err := e.runRetry(); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("run = %v, want the injected failure after the commit", err)
	}
	setFailpoint(t, nil)
	e.assertLog("committed, not confirmed", want)
	want = append(want, e.logSteps([]logStep{{`INSERT INTO ` + src + ` VALUES (70, 'new', 1, NULL)`, []string{"I 70"}}})...)
	if res := e.runOK(); res.Appended != 1 {
		t.Errorf("next run = %+v, want only the new op appended", res)
	}
	e.assertLog("after the next run", want)
	e.assertCurrent("after the next run")
}

// TestChangelog_TwoTables: one transaction over two captured tables (one
// with a composite key, whose key changes) numbers its ops across both
// logs, so the union of the logs ordered by (_weir_lsn, _weir_ord) is the
// transaction's order.
func TestChangelog_TwoTables(t *testing.T) {
	e := setup(t)
	e.cfg.Changelog = true
	src2 := routes.TableRef{Schema: e.src.Schema, Name: "accounts"}
	dst2 := routes.TableRef{Schema: e.dst.Schema, Name: "accounts"}
	e.exec(`CREATE TABLE ` + ident(src2) + ` (region text, id bigint, balance numeric(12,2), PRIMARY KEY (region, id))`)
	e.exec(`INSERT INTO ` + ident(src2) + ` SELECT 'eu', g, g * 1.5 FROM generate_series(1, 10) g`)
	e.cfg.Tables = append(e.cfg.Tables, Pair{Source: src2, Dest: dst2})
	e.runOK()
	e.exec(`BEGIN; UPDATE ` + ident(e.src) + ` SET n = 0 WHERE id = 4;
UPDATE ` + ident(src2) + ` SET region = 'us' WHERE id = 3; DELETE FROM ` + ident(src2) + ` WHERE id = 4;
INSERT INTO ` + ident(e.src) + ` VALUES (99, 'x', 1, NULL); COMMIT`)
	e.runOK()
	q := fmt.Sprintf(`SELECT string_agg(op, ',' ORDER BY lsn, ord) FROM (
  SELECT _weir_op || ' items ' || id AS op, _weir_lsn AS lsn, _weir_ord AS ord FROM %s WHERE _weir_op <> 'B'
  UNION ALL
  SELECT _weir_op || ' accounts ' || region || '/' || id, _weir_lsn, _weir_ord FROM %s WHERE _weir_op <> 'B') x`,
		ident(e.dst), ident(dst2))
	want := "U items 4,D accounts eu/3,U accounts us/3,D accounts eu/4,I items 99"
	if got := e.ddb.Query(t, e.ctx, q); got != want {
		t.Fatalf("ops across the logs = %s, want %s", got, want)
	}
	e.assertCurrent("items")
	cols := []string{"region", "id", "balance"}
	if s, d := e.sdb.Hash(t, e.ctx, "accounts", cols, "region, id"), e.ddb.Hash(t, e.ctx, "accounts"+cdc.CurrentSuffix, cols, "region, id"); s != d {
		t.Fatalf("accounts__current %s != source %s", d, s)
	}
}

// TestChangelog_OntoReplica: a changelog pointed at a replica's table is
// bad input naming the table, not a lost slot.
func TestChangelog_OntoReplica(t *testing.T) {
	e := setup(t)
	e.runOK() // a replica
	cl := e.cfg
	cl.Changelog = true
	t.Cleanup(func() { // the changelog pair's slot, if any (e's cleanup drops the replica's)
		ctx, cancel := routestest.CleanupContext()
		defer cancel()
		name, _ := cl.Name()
		dropSlot(ctx, e.conn, name)
	})
	start := time.Now()
	_, err := Run(e.ctx, cl)
	if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "not a changelog") {
		t.Fatalf("changelog onto a replica = %v, want bad input naming the table", err)
	}
	t.Logf("refused in %s", time.Since(start))
}

// checkLogRows is the changelog test's two SQL checks, over an Iceberg log
// read through the route: every I/U version of the wide row (500, moved
// to 502) holds the one value > 8 KB; deletes carry the old row's name
// only with REPLICA IDENTITY FULL (wantD: deletes/with a name).
func (e *env) checkLogRows(wantD string) {
	e.t.Helper()
	bigs := map[string]bool{}
	deletes, named := 0, 0
	for _, r := range e.ddb.Rows(e.t, e.ctx, e.dst.Name, []string{cdc.ColOp, "id", "name", "big"}) {
		f := strings.SplitN(r, "|", 4)
		switch {
		case (f[0] == "I" || f[0] == "U") && (f[1] == "500" || f[1] == "502"):
			bigs[f[3]] = true
		case f[0] == "D":
			deletes++
			if f[2] != `\N` {
				named++
			}
		}
	}
	for b := range bigs {
		if len(bigs) != 1 || len(b) <= 8192 {
			e.t.Errorf("wide row versions in the log: %d distinct values (one %d bytes); want one value > 8 KB", len(bigs), len(b))
		}
	}
	if got := fmt.Sprintf("%d/%d", deletes, named); got != wantD {
		e.t.Errorf("deletes/with a name = %s, want %s", got, wantD)
	}
}

// loseSlotThenReset drops the pair's slot, changes the source (row 3
// deleted, 77 inserted: changes the lost slot never delivers), checks that
// the next run fails with ErrSlotLost, resets the pair (weir reset) and
// runs it again, which must bootstrap.
func (e *env) loseSlotThenReset() {
	e.t.Helper()
	name, _ := e.cfg.Name()
	if err := dropSlot(e.ctx, e.conn, name); err != nil {
		e.t.Fatal(err)
	}
	e.exec(`DELETE FROM ` + ident(e.src) + ` WHERE id = 3`)
	e.exec(`INSERT INTO ` + ident(e.src) + ` VALUES (77, 'lost', 1, NULL)`)
	if _, err := Run(e.ctx, e.cfg); !errors.Is(err, ErrSlotLost) {
		e.t.Fatalf("run after the slot was dropped = %v, want ErrSlotLost", err)
	}
	if err := Drop(e.ctx, e.cfg); err != nil {
		e.t.Fatal(err)
	}
	if res := e.runOK(); !res.Bootstrap {
		e.t.Fatalf("run after reset = %+v, want a bootstrap", res)
	}
}
