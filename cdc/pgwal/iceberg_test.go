package pgwal

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
	wice "github.com/weirhq/weir/routes/iceberg"
	"github.com/weirhq/weir/routes/routestest"
)

// TestIceberg_CrashBetweenTables: Iceberg commits each table on its own,
// so a run can die with one table committed and the other not. The next
// run restarts from the lowest saved position: the capture skips for a
// replica table the transactions it holds already (a replayed TOAST key
// change would be filled from the table's later state), a changelog
// skips the ops it holds (no op twice, none lost).
func TestIceberg_CrashBetweenTables(t *testing.T) {
	for _, changelog := range []bool{false, true} {
		name := "replica"
		if changelog {
			name = "changelog"
		}
		t.Run(name, func(t *testing.T) { crashBetweenTables(t, changelog) })
	}
}

func crashBetweenTables(t *testing.T, changelog bool) {
	e := setupTo(t, "iceberg")
	e.cfg.Changelog = changelog
	src2 := routes.TableRef{Schema: e.src.Schema, Name: "accounts"}
	dst2 := routes.TableRef{Schema: e.dst.Schema, Name: "accounts"}
	e.exec(`CREATE TABLE ` + ident(src2) + ` (region text, id bigint, balance numeric(12,2), note text, PRIMARY KEY (region, id))`)
	e.exec(`INSERT INTO ` + ident(src2) + ` SELECT 'eu', g, g * 1.5, NULL FROM generate_series(1, 10) g`)
	e.exec(`UPDATE ` + ident(src2) + ` SET note = ` + bigText + ` WHERE id = 5`)
	e.cfg.Tables = append(e.cfg.Tables, Pair{Source: src2, Dest: dst2})
	e.runOK()
	if !changelog { // the bootstrap's bulk copy made the tables: keyed for equality deletes
		e.checkIdentifiers(e.dst, "id")
		e.checkIdentifiers(dst2, "region", "id")
	}
	e.exec(`BEGIN; UPDATE ` + ident(e.src) + ` SET n = 0 WHERE id = 4;
UPDATE ` + ident(src2) + ` SET region = 'us' WHERE id = 3; DELETE FROM ` + ident(src2) + ` WHERE id = 4;
INSERT INTO ` + ident(e.src) + ` VALUES (99, 'x', 1, NULL); COMMIT`)
	e.exec(`UPDATE ` + ident(e.src) + ` SET name = 'y' WHERE id = 5`)
	// A key change that leaves the wide note unchanged (TOAST), then the
	// old key taken by a new row: replayed onto accounts, which holds both
	// already, the note would be filled from the new row 5.
	e.exec(`UPDATE ` + ident(src2) + ` SET id = 500 WHERE id = 5`)
	e.exec(`INSERT INTO ` + ident(src2) + ` VALUES ('eu', 5, 1, 'short')`)
	// accounts commits first (name order), then the run dies.
	routes.SetCheckpointHook(func(s string) error {
		if s == "apply-between-tables" {
			return errors.New("injected failure")
		}
		return nil
	})
	t.Cleanup(func() { routes.SetCheckpointHook(nil) })
	if _, err := e.runRetry(); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("run = %v, want the injected failure between the tables' commits", err)
	}
	routes.SetCheckpointHook(nil)
	sr := e.stateReader()
	s1, _, _ := sr.LoadState(e.ctx, dst2, e.sourceID(src2))
	s2, _, _ := sr.LoadState(e.ctx, e.dst, e.sourceID(e.src))
	if s1.Position == s2.Position {
		t.Fatalf("positions after the crash: accounts %s, items %s; want accounts ahead", s1.Position, s2.Position)
	}
	e.exec(`INSERT INTO ` + ident(e.src) + ` VALUES (100, 'z', 1, NULL)`)
	e.exec(`UPDATE ` + ident(src2) + ` SET balance = 0 WHERE id = 500`)
	e.runOK()
	cols := []string{"region", "id", "balance", "note"}
	if changelog {
		if got, want := e.ddb.LogOps(t, e.ctx, "accounts", "id", false), []string{"D 3", "U 3", "D 4", "D 5", "U 500", "I 5", "U 500"}; !slices.Equal(got, want) {
			t.Fatalf("accounts log ops %v, want %v", got, want)
		}
		e.assertLog("items", []string{"U 4", "I 99", "U 5", "I 100"})
		e.assertCurrent("items")
		if s, d := e.sdb.RowsHash(t, e.ctx, "accounts", cols), e.ddb.CurrentHash(t, e.ctx, "accounts", cols, []string{"region", "id"}); s != d {
			t.Fatalf("accounts current state %s != source %s", d, s)
		}
		return
	}
	e.assertEqual("items")
	if s, d := e.sdb.RowsHash(t, e.ctx, "accounts", cols), e.ddb.RowsHash(t, e.ctx, "accounts", cols); s != d {
		t.Fatalf("accounts: destination %s != source %s", d, s)
	}
}

func (e *env) stateReader() routes.StateReader {
	e.t.Helper()
	dst, err := routes.OpenDestination(e.ctx, e.ddb.URL)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { dst.Close() })
	return dst.(routes.StateReader)
}

func (e *env) sourceID(t routes.TableRef) string {
	e.t.Helper()
	src, err := routes.OpenSource(e.ctx, e.sdb.URL)
	if err != nil {
		e.t.Fatal(err)
	}
	defer src.Close()
	info, err := src.Probe(e.ctx, t)
	if err != nil {
		e.t.Fatal(err)
	}
	return info.SourceID
}

// checkIdentifiers: an Iceberg replica's identifier fields are the key.
func (e *env) checkIdentifiers(t routes.TableRef, want ...string) {
	e.t.Helper()
	dst, err := routes.OpenDestination(e.ctx, e.ddb.URL)
	if err != nil {
		e.t.Fatal(err)
	}
	defer dst.Close()
	tbl, err := dst.(*wice.Endpoint).LoadTable(e.ctx, t)
	if err != nil {
		e.t.Fatal(err)
	}
	var got []string
	for _, id := range tbl.Schema().IdentifierFieldIDs {
		f, _ := tbl.Schema().FindFieldByID(id)
		got = append(got, f.Name)
	}
	if !slices.Equal(got, want) {
		e.t.Fatalf("%s: identifier fields %v, want %v", t, got, want)
	}
}

// TestIceberg_EmptyBootstrap: an empty source table bootstraps an empty
// Iceberg table (replica) or log with its position; the next run applies
// what came since.
func TestIceberg_EmptyBootstrap(t *testing.T) {
	for _, changelog := range []bool{false, true} {
		t.Run(map[bool]string{false: "replica", true: "changelog"}[changelog], func(t *testing.T) {
			e := setupTo(t, "iceberg")
			e.cfg.Changelog = changelog
			e.exec(`TRUNCATE ` + ident(e.src))
			if res := e.runOK(); !res.Bootstrap || res.Rows != 0 {
				t.Fatalf("bootstrap = %+v, want 0 rows", res)
			}
			e.exec(`INSERT INTO ` + ident(e.src) + ` VALUES (1, 'a', 1, NULL), (2, 'b', 2, NULL)`)
			e.exec(`DELETE FROM ` + ident(e.src) + ` WHERE id = 1`)
			e.runOK()
			if changelog {
				e.assertLog("after the empty bootstrap", []string{"I 1", "I 2", "D 1"})
				e.assertCurrent("after the empty bootstrap")
				return
			}
			e.assertEqual("after the empty bootstrap")
		})
	}
}

// TestIceberg_ChangelogOntoReplica: a changelog pointed at an Iceberg
// replica is bad input naming the table (its schema is not evolved into
// a log's).
func TestIceberg_ChangelogOntoReplica(t *testing.T) {
	e := setupTo(t, "iceberg")
	e.runOK() // a replica
	cl := e.cfg
	cl.Changelog = true
	t.Cleanup(func() {
		ctx, cancel := routestest.CleanupContext()
		defer cancel()
		name, _ := cl.Name()
		dropSlot(ctx, e.conn, name)
	})
	if _, err := Run(e.ctx, cl); !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "not a changelog") {
		t.Fatalf("changelog onto a replica = %v, want bad input naming the table", err)
	}
	e.assertEqual("the replica after the refused changelog")
}

// TestIceberg_Reset: after a lost slot, Drop (weir reset) clears the
// Iceberg tables' positions (a state-only commit) and the next run
// bootstraps again: a replica is replaced, a changelog gets a second
// baseline from which its current state starts.
func TestIceberg_Reset(t *testing.T) {
	for _, changelog := range []bool{false, true} {
		t.Run(map[bool]string{false: "replica", true: "changelog"}[changelog], func(t *testing.T) {
			e := setupTo(t, "iceberg")
			e.cfg.Changelog = changelog
			e.runOK()
			e.loseSlotThenReset()
			if !changelog {
				e.assertEqual("after the re-bootstrap")
				return
			}
			if got := e.logOps(true); len(got) != 100 || len(e.logOps(false)) != 0 {
				t.Fatalf("log = %d rows, want two baselines of 50 and no op", len(got))
			}
			e.checkNoBaseTable()
			e.assertCurrent("after the re-bootstrap")
			e.exec(`UPDATE ` + ident(e.src) + ` SET name = 'after' WHERE id = 4`)
			e.runOK()
			e.assertLog("after the re-bootstrap", []string{"U 4"})
		})
	}
}

// TestIceberg_Types: pgoutput's text of PostgreSQL's common types, applied
// to the Iceberg table the bulk route created, reads back as the source's
// values (canonical text through both routes), as a replica and in a log.
func TestIceberg_Types(t *testing.T) {
	for _, changelog := range []bool{false, true} {
		t.Run(map[bool]string{false: "replica", true: "changelog"}[changelog], func(t *testing.T) {
			e := setupTo(t, "iceberg")
			e.cfg.Changelog = changelog
			typed := routes.TableRef{Schema: e.src.Schema, Name: "typed"}
			e.exec(`CREATE TABLE ` + ident(typed) + ` (id bigint PRIMARY KEY, b boolean, ts timestamptz, t timestamp, d date,
num numeric(10,3), bin bytea, j jsonb, f float8, r real, sm smallint, u uuid, tm time, v varchar(10))`)
			row := func(id int) string {
				return fmt.Sprintf(`(%d, %d %% 2 = 0, '2024-03-04 05:06:07.123456+02', '2024-03-04 05:06:07.5', '2024-03-04', %d.125,
'\x00ff%02x', '{"a": %d}', %d.5, 0.25, %d, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a%02x', '12:34:56.789', 'v%d')`, id, id, id, id, id, id, id, id, id)
			}
			e.exec(`INSERT INTO ` + ident(typed) + ` VALUES ` + row(1) + `, ` + row(2))
			e.cfg.Tables = []Pair{{Source: typed, Dest: routes.TableRef{Schema: e.dst.Schema, Name: "typed"}}}
			e.runOK()
			e.exec(`INSERT INTO ` + ident(typed) + ` VALUES ` + row(3) + `, (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`)
			e.exec(`UPDATE ` + ident(typed) + ` SET ts = '1999-12-31 23:59:59+00', num = -1.5, bin = '\xdead', b = NOT b WHERE id = 1`)
			e.exec(`DELETE FROM ` + ident(typed) + ` WHERE id = 2`)
			e.runOK()
			cols := []string{"id", "b", "ts", "t", "d", "num", "bin", "j", "f", "r", "sm", "u", "tm", "v"}
			s := e.sdb.RowsHash(t, e.ctx, "typed", cols)
			var d string
			if changelog {
				d = e.ddb.CurrentHash(t, e.ctx, "typed", cols, []string{"id"})
			} else {
				d = e.ddb.RowsHash(t, e.ctx, "typed", cols)
			}
			if s != d {
				t.Fatalf("typed: destination %s != source %s\nsource %v\ndestination %v", d, s,
					e.sdb.Rows(t, e.ctx, "typed", cols), e.ddb.Rows(t, e.ctx, "typed", cols))
			}
		})
	}
}

// TestIceberg_KilledInApply: SIGKILL with every chunk written and staged
// but not committed leaves the Iceberg table's current snapshot and saved
// position as they were; the files the dead run wrote are orphans
// (Endpoint.Orphans lists them); the next run (once the dead run's lease
// expired) converges.
func TestIceberg_KilledInApply(t *testing.T) {
	setFlush(t, 2)
	e := setupTo(t, "iceberg")
	e.runOK()
	e.workload()
	snapshot := func() string {
		dst, err := routes.OpenDestination(e.ctx, e.ddb.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer dst.Close()
		ep := dst.(*wice.Endpoint)
		tbl, err := ep.LoadTable(e.ctx, e.dst)
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := ep.LoadState(e.ctx, e.dst, e.sourceID(e.src))
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("snapshot %d, position %s", tbl.CurrentSnapshot().SnapshotID, s.Position)
	}
	before := snapshot()
	killChildAt(t, e.cfg, "apply-before-commit")
	if got := snapshot(); got != before {
		t.Fatalf("killed apply moved the table: %s, was %s", got, before)
	}
	dst, err := routes.OpenDestination(e.ctx, e.ddb.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if orphans, err := dst.(*wice.Endpoint).Orphans(e.ctx, e.dst); err != nil || len(orphans) == 0 {
		t.Fatalf("orphans after the kill = %v, %v; want the dead run's files", orphans, err)
	}
	e.runOK()
	e.assertEqual("re-run after the kill")
}

// checkNoBaseTable: the bootstrap's staged <table>__weir_base is dropped
// once its rows are in the log.
func (e *env) checkNoBaseTable() {
	e.t.Helper()
	dst, err := routes.OpenDestination(e.ctx, e.ddb.URL)
	if err != nil {
		e.t.Fatal(err)
	}
	defer dst.Close()
	tables, err := dst.(routes.TableLister).ListTables(e.ctx, e.ddb.Schema)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(tables) != 1 || tables[0] != e.dst {
		e.t.Fatalf("tables in the lake: %v, want only the log %s", tables, e.dst)
	}
}
