package pgwal

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// ClickHouse commits each destination table on its own, and a run starts
// from the lowest position over the pair's tables: after a crash between
// two tables' commits the next run hands the committed table changes it
// already holds. A replica re-applies them (idempotent); a changelog must
// skip them, or its ops would be there twice.

// twoTables adds accounts (composite key) to e's pair and bootstraps.
func (e *env) twoTables() (routes.TableRef, routes.TableRef) {
	src2 := routes.TableRef{Schema: e.src.Schema, Name: "accounts"}
	dst2 := routes.TableRef{Schema: e.dst.Schema, Name: "accounts"}
	e.exec(`CREATE TABLE ` + ident(src2) + ` (region text, id bigint, balance numeric(12,2), PRIMARY KEY (region, id))`)
	e.exec(`INSERT INTO ` + ident(src2) + ` SELECT 'eu', g, g * 1.5 FROM generate_series(1, 10) g`)
	e.cfg.Tables = append(e.cfg.Tables, Pair{Source: src2, Dest: dst2})
	e.runOK()
	return src2, dst2
}

// crashBetweenTables runs once with a failure right after the first
// table's commit (accounts sorts first), then again.
func (e *env) crashBetweenTables() {
	e.t.Helper()
	calls := 0
	routes.SetCheckpointHook(func(s string) error {
		if s == "apply-after-table-commit" {
			if calls++; calls == 1 {
				return errors.New("injected crash between tables")
			}
		}
		return nil
	})
	defer routes.SetCheckpointHook(nil)
	if _, err := e.runRetry(); err == nil || !strings.Contains(err.Error(), "injected") {
		e.t.Fatalf("run = %v, want the injected crash", err)
	}
	if calls != 1 {
		e.t.Fatalf("after-table-commit reached %d times, want 1", calls)
	}
}

// twoTableWork changes both tables in several transactions, some of them
// touching both.
func (e *env) twoTableWork(src2 routes.TableRef) {
	e.exec(`BEGIN; UPDATE ` + ident(e.src) + ` SET n = 0 WHERE id = 4;
UPDATE ` + ident(src2) + ` SET region = 'us' WHERE id = 3; DELETE FROM ` + ident(src2) + ` WHERE id = 4;
INSERT INTO ` + ident(e.src) + ` VALUES (99, 'x', 1, NULL); COMMIT`)
	e.exec(`INSERT INTO ` + ident(src2) + ` VALUES ('ap', 1, 2.5)`)
	e.exec(`UPDATE ` + ident(e.src) + ` SET name = 'y' WHERE id = 99`)
	e.exec(`UPDATE ` + ident(src2) + ` SET balance = 0 WHERE id = 5`)
}

func TestClickHouse_ChangelogCrashBetweenTables(t *testing.T) {
	e := setupTo(t, "clickhouse")
	e.cfg.Changelog = true
	src2, _ := e.twoTables()
	e.twoTableWork(src2)
	accounts := []string{"D eu/3", "U us/3", "D eu/4", "I ap/1", "U eu/5"}
	items := []string{"U 4", "I 99", "U 99"}
	e.crashBetweenTables()
	if got := e.ddb.LogOps(t, e.ctx, "accounts", "concat(region, '/', toString(id))", false); !slices.Equal(got, accounts) {
		t.Fatalf("accounts after the crash: %v, want %v (committed first)", got, accounts)
	}
	if got := e.logOps(false); got != nil {
		t.Fatalf("items after the crash: %v, want nothing (not committed)", got)
	}
	// The re-run starts at items' position: accounts gets its ops again
	// and must skip them; then one more change to each.
	e.exec(`UPDATE ` + ident(src2) + ` SET balance = 7 WHERE region = 'ap'`)
	e.exec(`DELETE FROM ` + ident(e.src) + ` WHERE id = 99`)
	e.runOK()
	accounts, items = append(accounts, "U ap/1"), append(items, "D 99")
	if got := e.ddb.LogOps(t, e.ctx, "accounts", "concat(region, '/', toString(id))", false); !slices.Equal(got, accounts) {
		t.Fatalf("accounts after the re-run: %v, want %v", got, accounts)
	}
	e.assertLog("items after the re-run", items)
	e.assertCurrent("items")
	e.assertAccounts("accounts" + cdc.CurrentSuffix)
	if res := e.runOK(); res.Appended != 0 {
		t.Errorf("idle run appended %d ops", res.Appended)
	}
	e.assertLog("items after an idle run", items)
}

func TestClickHouse_ReplicaCrashBetweenTables(t *testing.T) {
	e := setupTo(t, "clickhouse")
	src2, _ := e.twoTables()
	e.twoTableWork(src2)
	e.crashBetweenTables()
	e.exec(`UPDATE ` + ident(src2) + ` SET balance = 7 WHERE region = 'ap'`)
	e.exec(`DELETE FROM ` + ident(e.src) + ` WHERE id = 99`)
	e.runOK()
	e.assertEqual("items after the re-run")
	e.assertAccounts("accounts")
}

func (e *env) assertAccounts(dest string) {
	e.t.Helper()
	cols := []string{"region", "id", "balance"}
	if s, d := e.sdb.Hash(e.t, e.ctx, "accounts", cols, "region, id"), e.ddb.Hash(e.t, e.ctx, dest, cols, "region, id"); s != d {
		e.t.Fatalf("%s %s != source %s", dest, d, s)
	}
}

// TestClickHouse_ReplicaShape: the replica is ReplacingMergeTree by
// version with tombstones; an idle run writes nothing; a changelog onto
// it is bad input.
func TestClickHouse_ReplicaShape(t *testing.T) {
	e := setupTo(t, "clickhouse")
	e.runOK()
	e.workload()
	e.runOK()
	tbl := e.ddb.Table(e.dst.Name)
	engine := e.ddb.Query(t, e.ctx, fmt.Sprintf("SELECT engine_full FROM system.tables WHERE database = '%s' AND name = '%s'", e.dst.Schema, e.dst.Name))
	if !strings.HasPrefix(engine, "ReplacingMergeTree(_weir_version)") {
		t.Errorf("engine = %s, want ReplacingMergeTree(_weir_version)", engine)
	}
	if got := e.ddb.Query(t, e.ctx, "SELECT toString(count()) FROM "+tbl+" FINAL WHERE _weir_deleted = 1 AND id BETWEEN 20 AND 25"); got != "6" {
		t.Errorf("tombstones of the deleted rows = %s, want 6", got)
	}
	rows := e.ddb.Query(t, e.ctx, "SELECT toString(count()) FROM "+tbl)
	if res := e.runOK(); res.Changes != 0 {
		t.Errorf("idle run = %+v", res)
	}
	if got := e.ddb.Query(t, e.ctx, "SELECT toString(count()) FROM "+tbl); got != rows {
		t.Errorf("idle run wrote rows: %s, was %s", got, rows)
	}
	e.assertEqual("after an idle run")
	cl := e.cfg
	cl.Changelog = true
	defer func() {
		name, _ := cl.Name()
		dropSlot(e.ctx, e.conn, name)
	}()
	if _, err := Run(e.ctx, cl); !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "not a changelog") {
		t.Fatalf("changelog onto a replica = %v, want bad input", err)
	}
}

// TestClickHouse_KilledInCommit: SIGKILL inside a table's commit, with the
// applying record written and the stage not landed yet ("commit") or
// landed but not recorded as committed ("commit-landed"). The next run
// decides from the data (routes/clickhouse LoadState): not landed, the old
// position and the window again; landed, the new position and nothing
// again. Either way the replica ends equal to the source and a log holds
// every op once.
func TestClickHouse_KilledInCommit(t *testing.T) {
	for _, changelog := range []bool{false, true} {
		for _, phase := range []string{"commit", "commit-landed"} {
			t.Run(fmt.Sprintf("changelog=%v/%s", changelog, phase), func(t *testing.T) {
				killedInCommit(t, setupTo(t, "clickhouse"), changelog, phase)
			})
		}
	}
}

func killedInCommit(t *testing.T, e *env, changelog bool, phase string) {
	e.cfg.Changelog = changelog
	e.runOK()
	src := ident(e.src)
	want := e.logSteps([]logStep{
		{`UPDATE ` + src + ` SET id = 1000 WHERE id = 7`, []string{"D 7", "U 1000"}},
		{`INSERT INTO ` + src + ` VALUES (5000, 'post', 5, ` + bigText + `)`, []string{"I 5000"}},
		{`UPDATE ` + src + ` SET n = 1 WHERE id = 5000`, []string{"U 5000"}},
	})
	killChildAt(t, e.cfg, phase)
	landed := phase == "commit-landed"
	if changelog {
		got := e.logOps(false)
		if (landed && !slices.Equal(got, want)) || (!landed && got != nil) {
			t.Fatalf("log after the kill at %s: %v", phase, got)
		}
	} else if s, d := e.hash(e.src), e.hash(e.dst); (s == d) != landed {
		t.Fatalf("replica after the kill at %s: equal to the source = %v, want %v", phase, s == d, landed)
	}
	res := e.runOK()
	if landed && res.Changes != 0 {
		t.Errorf("run after a landed commit = %+v, want nothing again", res)
	}
	if !landed && res.Changes == 0 {
		t.Errorf("run after an unlanded commit = %+v, want the window again", res)
	}
	if changelog {
		e.assertLog("after the re-run", want)
		e.assertCurrent("after the re-run")
	} else {
		e.assertEqual("after the re-run")
	}
}

// TestClickHouse_Reset: weir reset (Drop) clears the replica's position;
// the next run bootstraps again into the existing replica, whose replace
// keeps the replica's engine and columns, and later changes apply on top.
func TestClickHouse_Reset(t *testing.T) {
	e := setupTo(t, "clickhouse")
	e.runOK()
	e.workload()
	e.runOK()
	if err := Drop(e.ctx, e.cfg); err != nil {
		t.Fatal(err)
	}
	e.exec(`UPDATE ` + ident(e.src) + ` SET name = 'after reset' WHERE id = 2`)
	if res := e.runOK(); !res.Bootstrap {
		t.Fatalf("run after reset = %+v, want a bootstrap", res)
	}
	e.assertEqual("after the re-bootstrap")
	engine := e.ddb.Query(t, e.ctx, fmt.Sprintf("SELECT engine_full FROM system.tables WHERE database = '%s' AND name = '%s'", e.dst.Schema, e.dst.Name))
	if !strings.HasPrefix(engine, "ReplacingMergeTree(_weir_version)") {
		t.Fatalf("engine after the re-bootstrap = %s", engine)
	}
	e.exec(`DELETE FROM ` + ident(e.src) + ` WHERE id = 2`)
	e.exec(`UPDATE ` + ident(e.src) + ` SET n = -1 WHERE id = 4`)
	e.runOK()
	e.assertEqual("after changes on the re-bootstrapped replica")
}
