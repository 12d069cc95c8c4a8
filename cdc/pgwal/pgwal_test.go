package pgwal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	_ "github.com/weirhq/weir/routes/clickhouse"
	_ "github.com/weirhq/weir/routes/mysql"
	_ "github.com/weirhq/weir/routes/postgres"
	"github.com/weirhq/weir/routes/routestest"
)

// env is one test's source schema and destination database.
type env struct {
	t    *testing.T
	ctx  context.Context
	conn *pgx.Conn // the source server, for slots
	cfg  Config
	sdb  *cdctest.DB
	ddb  *cdctest.DB
	src  routes.TableRef
	dst  routes.TableRef
}

// columns are the test table's columns, hashed as text on both sides.
var columns = []string{"id", "name", "n", "big"}

// destinations are the kinds every cross-destination test runs against.
var destinations = []string{"postgres", "mysql", "clickhouse", "iceberg"}

func setup(t *testing.T) *env { return setupTo(t, "postgres") }

func setupTo(t *testing.T, kind string) *env {
	// The drain decodes every WAL record since the slot's position, other
	// tests' bulk loads on the shared server included: allow for a busy one.
	ctx := routestest.Context(t, 4*time.Minute)
	sdb := cdctest.Open(t, ctx, "postgres")
	ddb := cdctest.Open(t, ctx, kind)
	conn, err := pgx.Connect(ctx, sdb.URL)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, conn: conn, sdb: sdb, ddb: ddb, src: sdb.Ref("items"), dst: ddb.Ref("items")}
	e.cfg = Config{SourceURL: sdb.URL, DestURL: ddb.URL, Tables: []Pair{{Source: e.src, Dest: e.dst}}}
	if kind == "clickhouse" {
		e.cfg.DestURL = ddb.URLWith("lease=2s") // a killed run's lock expires soon (killLease)
	}
	t.Cleanup(e.cleanup)
	e.exec(`CREATE TABLE ` + ident(e.src) + ` (id int PRIMARY KEY, name text NOT NULL, n int, big text)`)
	e.exec(`INSERT INTO ` + ident(e.src) + ` SELECT g, 'row ' || g, g * 10, NULL FROM generate_series(1, 50) g`)
	return e
}

// cleanup drops the pair's slot and publication (the schemas are dropped
// by cdctest).
func (e *env) cleanup() {
	ctx, cancel := routestest.CleanupContext()
	defer cancel()
	name, _ := e.cfg.Name()
	if err := dropSlot(ctx, e.conn, name); err != nil {
		e.t.Errorf("cleanup: %v", err)
	}
	dropPublication(ctx, e.conn, name)
	e.conn.Close(ctx)
}

func (e *env) exec(sql string, args ...any) {
	e.t.Helper()
	if _, err := e.conn.Exec(e.ctx, sql, args...); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
}

func (e *env) run() Result {
	e.t.Helper()
	res, err := Run(e.ctx, e.cfg)
	if err != nil {
		e.t.Fatalf("run: %v", err)
	}
	return res
}

// hash is the ordered hash of the source or destination table. With an
// Iceberg destination (no SQL there) both sides are read through weir's
// routes and hashed in their canonical text (cdctest.DB.RowsHash).
func (e *env) hash(t routes.TableRef) string {
	e.t.Helper()
	db := e.sdb
	if t == e.dst {
		db = e.ddb
	}
	if e.ddb.Kind == "iceberg" {
		return db.RowsHash(e.t, e.ctx, t.Name, columns)
	}
	return db.Hash(e.t, e.ctx, t.Name, columns, "id")
}

func (e *env) assertEqual(step string) {
	e.t.Helper()
	if s, d := e.hash(e.src), e.hash(e.dst); s != d {
		e.t.Fatalf("%s: destination %s != source %s", step, d, s)
	}
}

// bigText is > 8 KB of poorly compressible text, stored out of line (TOAST).
const bigText = `(SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 400))`

func (e *env) workload() {
	src := ident(e.src)
	e.exec(`INSERT INTO ` + src + ` SELECT g, 'new ' || g, g, NULL FROM generate_series(51, 70) g`)
	e.exec(`UPDATE ` + src + ` SET name = name || '!', n = n + 1 WHERE id % 3 = 0`)
	e.exec(`UPDATE ` + src + ` SET id = 1000 WHERE id = 7`) // primary key change
	e.exec(`DELETE FROM ` + src + ` WHERE id BETWEEN 20 AND 25`)
	e.exec(`INSERT INTO ` + src + ` VALUES (500, 'wide', 1, ` + bigText + `)`)
	e.exec(`INSERT INTO ` + src + ` VALUES (501, 'wide2', 1, ` + bigText + `)`)
	e.exec(`UPDATE ` + src + ` SET n = n + 1 WHERE id = 1`)
	e.exec(`DELETE FROM ` + src + ` WHERE id = 1`)
	e.exec(`INSERT INTO ` + src + ` VALUES (1, 'again', 2, 'x')`)
}

func TestRun_Workload(t *testing.T) {
	// chunks of 2: the window is applied two changes at a time inside the
	// one transaction, so key changes, TOAST fills (from rows an earlier
	// chunk wrote) and a TRUNCATE (of rows an earlier chunk wrote) cross
	// chunk boundaries.
	tests := []struct {
		name, identity string
		flush          int
	}{
		{"identity default", "DEFAULT", 0},
		{"identity full", "FULL", 0},
		{"identity default/chunks of 2", "DEFAULT", 2},
	}
	for _, kind := range destinations {
		for _, tt := range tests {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				setFlush(t, tt.flush)
				e := setupTo(t, kind)
				e.exec(`ALTER TABLE ` + ident(e.src) + ` REPLICA IDENTITY ` + tt.identity)
				e.workloadRuns()
			})
		}
	}
}

func (e *env) workloadRuns() {
	t := e.t
	res := e.run()
	if !res.Bootstrap || res.Rows != 50 {
		t.Fatalf("bootstrap = %+v, want 50 rows", res)
	}
	e.assertEqual("bootstrap")
	e.workload()
	res = e.run()
	if res.Bootstrap || res.Changes == 0 {
		t.Fatalf("second run = %+v, want changes", res)
	}
	e.assertEqual("after workload")
	// TOAST: the wide rows' big column is left unchanged ('u' in pgoutput),
	// including across a key change.
	// Then each again: in chunks of 2 these read rows the first chunk wrote.
	e.exec(`UPDATE ` + ident(e.src) + ` SET n = n + 5 WHERE id = 500`)
	e.exec(`UPDATE ` + ident(e.src) + ` SET id = 502, name = 'moved' WHERE id = 501`)
	e.exec(`UPDATE ` + ident(e.src) + ` SET name = 'moved again' WHERE id = 502`)
	e.exec(`UPDATE ` + ident(e.src) + ` SET id = 503 WHERE id = 500`)
	e.run()
	e.assertEqual("after TOAST updates")
	e.checkToast(502)
	e.checkToast(503)
	// Rows written before the TRUNCATE in the same run (an earlier chunk)
	// must go too.
	e.exec(`INSERT INTO ` + ident(e.src) + ` VALUES (900, 'before truncate', 1, NULL)`)
	e.exec(`UPDATE ` + ident(e.src) + ` SET n = n + 1 WHERE id = 2`)
	e.exec(`TRUNCATE ` + ident(e.src))
	e.exec(`INSERT INTO ` + ident(e.src) + ` VALUES (1, 'after truncate', 1, NULL), (2, 'b', 2, NULL)`)
	e.exec(`UPDATE ` + ident(e.src) + ` SET name = 'B' WHERE id = 2`)
	res = e.run()
	if res.Truncates != 1 {
		t.Errorf("truncates = %d, want 1", res.Truncates)
	}
	e.assertEqual("after truncate")
	e.checkConfirmed(res.To)
	if res := e.run(); res.Changes != 0 {
		t.Errorf("idle run = %+v, want no changes", res)
	}
}

func (e *env) checkToast(id int) {
	e.t.Helper()
	if e.ddb.Kind == "iceberg" {
		for _, r := range e.ddb.Rows(e.t, e.ctx, e.dst.Name, []string{"id", "big"}) {
			if id2, big, _ := strings.Cut(r, "|"); id2 == fmt.Sprint(id) && len(big) > 8192 {
				return
			}
		}
		e.t.Fatalf("wide row %d: missing or not > 8 KB", id)
	}
	n := e.ddb.Query(e.t, e.ctx, fmt.Sprintf(`SELECT length(big) FROM %s WHERE id = %d`, e.ddb.Table(e.dst.Name), id))
	if len(n) < 4 {
		e.t.Fatalf("wide row %d: length %s; want > 8 KB", id, n)
	}
}

// checkConfirmed: the slot's confirmed_flush_lsn reached the committed
// position (the confirmation is asynchronous: poll briefly).
func (e *env) checkConfirmed(pos string) {
	e.t.Helper()
	name, _ := e.cfg.Name()
	for range 50 {
		var ok bool
		q := `SELECT confirmed_flush_lsn >= $2::pg_lsn FROM pg_replication_slots WHERE slot_name = $1`
		if err := e.conn.QueryRow(e.ctx, q, name, pos).Scan(&ok); err != nil {
			e.t.Fatal(err)
		}
		if ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.t.Errorf("slot %s never confirmed %s", name, pos)
}

func TestRun_WritesDuringBootstrap(t *testing.T) {
	for _, kind := range destinations {
		t.Run(kind, func(t *testing.T) { writesDuringBootstrap(t, setupTo(t, kind)) })
	}
}

func writesDuringBootstrap(t *testing.T, e *env) {
	other, err := pgx.Connect(e.ctx, e.cfg.SourceURL)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(e.ctx)
	// Writes committed after the snapshot was exported, before the
	// bootstrap copies: the copy must not see them and the slot must
	// deliver them, exactly once.
	setFailpoint(t, func(stage string) error {
		if stage != "bootstrap-copy" {
			return nil
		}
		_, err := other.Exec(e.ctx, `INSERT INTO `+ident(e.src)+` VALUES (900, 'during', 1, NULL);
UPDATE `+ident(e.src)+` SET name = 'during' WHERE id = 2; DELETE FROM `+ident(e.src)+` WHERE id = 3`)
		return err
	})
	e.run()
	setFailpoint(t, nil)
	e.run()
	e.assertEqual("after writes during bootstrap")
}

func TestRun_FailureInsideApply(t *testing.T) {
	for _, kind := range destinations {
		for _, stage := range []string{"after-truncate", "before-state", "before-commit"} {
			t.Run(kind+"/"+stage, func(t *testing.T) { failureInsideApply(t, setupTo(t, kind), stage) })
		}
		// Every chunk but the last applied, then the failure: none landed.
		t.Run(kind+"/before-commit/chunks of 2", func(t *testing.T) {
			setFlush(t, 2)
			failureInsideApply(t, setupTo(t, kind), "before-commit")
		})
	}
}

func failureInsideApply(t *testing.T, e *env, stage string) {
	e.run()
	e.workload()
	e.exec(`TRUNCATE ` + ident(e.src))
	e.exec(`INSERT INTO ` + ident(e.src) + ` VALUES (5, 'post', 5, ` + bigText + `)`)
	before := e.hash(e.dst)
	routes.SetCheckpointHook(func(s string) error {
		if s == "apply-"+stage {
			return errors.New("injected failure")
		}
		return nil
	})
	t.Cleanup(func() { routes.SetCheckpointHook(nil) })
	if _, err := Run(e.ctx, e.cfg); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("run with failure = %v, want the injected failure", err)
	}
	if got := e.hash(e.dst); got != before {
		t.Fatalf("failed apply changed the destination")
	}
	routes.SetCheckpointHook(nil)
	e.run()
	e.assertEqual("re-run after failure")
}

func TestRun_DroppedSlot(t *testing.T) {
	e := setup(t)
	e.run()
	name, _ := e.cfg.Name()
	if err := dropSlot(e.ctx, e.conn, name); err != nil {
		t.Fatal(err)
	}
	e.exec(`INSERT INTO ` + ident(e.src) + ` VALUES (77, 'lost', 1, NULL)`)
	_, err := Run(e.ctx, e.cfg)
	var lost *SlotLostError
	if !errors.As(err, &lost) || !errors.Is(err, ErrSlotLost) || !strings.Contains(err.Error(), "weir reset") {
		t.Fatalf("run after the slot was dropped = %v, want a SlotLostError naming weir reset", err)
	}
	// The fix: reset, then the next run bootstraps again.
	if err := Drop(e.ctx, e.cfg); err != nil {
		t.Fatal(err)
	}
	if res := e.run(); !res.Bootstrap {
		t.Fatalf("run after reset = %+v, want a bootstrap", res)
	}
	e.assertEqual("after re-bootstrap")
}

func setFailpoint(t *testing.T, fn func(string) error) {
	t.Cleanup(routes.SetCheckpointHook(fn))
}

func TestRun_FailedBootstrapRetries(t *testing.T) {
	e := setup(t)
	setFailpoint(t, func(stage string) error {
		if stage == "bootstrap-copy" {
			return errors.New("injected failure")
		}
		return nil
	})
	if _, err := Run(e.ctx, e.cfg); err == nil {
		t.Fatal("bootstrap with an injected failure succeeded")
	}
	setFailpoint(t, nil)
	e.exec(`UPDATE ` + ident(e.src) + ` SET name = 'between' WHERE id = 4`)
	if res := e.run(); !res.Bootstrap {
		t.Fatalf("run after a failed bootstrap = %+v, want a bootstrap (the stale slot dropped)", res)
	}
	e.assertEqual("after retried bootstrap")
}

func TestRun_ReplicaIdentityNothing(t *testing.T) {
	e := setup(t)
	e.exec(`ALTER TABLE ` + ident(e.src) + ` REPLICA IDENTITY NOTHING`)
	_, err := Run(e.ctx, e.cfg)
	if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "REPLICA IDENTITY") {
		t.Fatalf("run = %v, want bad input naming REPLICA IDENTITY", err)
	}
}

func TestRun_TwoTables(t *testing.T) {
	e := setup(t)
	src2 := routes.TableRef{Schema: e.src.Schema, Name: "accounts"}
	dst2 := routes.TableRef{Schema: e.dst.Schema, Name: "accounts"}
	e.exec(`CREATE TABLE ` + ident(src2) + ` (region text, id bigint, balance numeric(12,2), PRIMARY KEY (region, id))`)
	e.exec(`INSERT INTO ` + ident(src2) + ` SELECT 'eu', g, g * 1.5 FROM generate_series(1, 10) g`)
	e.cfg.Tables = append(e.cfg.Tables, Pair{Source: src2, Dest: dst2})
	e.run()
	e.exec(`UPDATE ` + ident(src2) + ` SET region = 'us' WHERE id = 3`) // composite key change
	e.exec(`DELETE FROM ` + ident(src2) + ` WHERE id = 4`)
	e.exec(`INSERT INTO ` + ident(e.src) + ` VALUES (300, 'x', 1, NULL)`)
	e.run()
	e.assertEqual("items")
	cols := []string{"region", "id", "balance"}
	if s, d := e.sdb.Hash(t, e.ctx, "accounts", cols, "region, id"), e.ddb.Hash(t, e.ctx, "accounts", cols, "region, id"); s != d {
		t.Fatalf("accounts: destination %s != source %s", d, s)
	}
}
