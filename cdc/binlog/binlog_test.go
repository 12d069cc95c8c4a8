package binlog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	_ "github.com/weirhq/weir/routes/clickhouse"
	_ "github.com/weirhq/weir/routes/mysql"
	_ "github.com/weirhq/weir/routes/postgres"
	"github.com/weirhq/weir/routes/routestest"
)

// env is one test's MySQL source database and its destination.
type env struct {
	t        *testing.T
	ctx      context.Context
	cfg      Config
	src, dst *cdctest.DB
}

const createItems = "CREATE TABLE %s (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL, n INT, big LONGTEXT," +
	" color ENUM('red','green','blue'), flags SET('a','b','c'), price DECIMAL(10,2), at DATETIME(6)," +
	" ok TINYINT(1), u INT UNSIGNED, raw VARBINARY(16))"

// exprs render each column as the same text on both servers.
var exprs = map[string][]string{
	"mysql": {"id", "name", "n", "md5(big)", "color", "flags", "price",
		"DATE_FORMAT(at, '%Y-%m-%d %H:%i:%s.%f')", "ok", "u", "hex(raw)"},
	"postgres": {"id", "name", "n", "md5(big)", "color", "flags", "price",
		"to_char(at, 'YYYY-MM-DD HH24:MI:SS.US')", "ok::int", "u", "upper(encode(raw, 'hex'))"},
	// Iceberg has no SQL: both sides are read through weir's routes and
	// compared in canonical text (cdctest.DB.Rows), by column name.
	"iceberg": {"id", "name", "n", "big", "color", "flags", "price", "at", "ok", "u", "raw"},
	// ClickHouse 18.16 has no DateTime64: DATETIME(6) lands as DateTime,
	// whole seconds (subseconds=truncate), so both sides render at as
	// seconds for it (srcExprs).
	"clickhouse": {"id", "name", "n", "lower(hex(MD5(big)))", "color", "flags", "price",
		"toString(at)", "ok", "u", "hex(raw)"},
}

// srcExprs renders the source's columns for a comparison with the
// destination's kind.
func (e *env) srcExprs() []string {
	if e.dst.Kind != "clickhouse" {
		return exprs["mysql"]
	}
	out := slices.Clone(exprs["mysql"])
	out[7] = "DATE_FORMAT(at, '%Y-%m-%d %H:%i:%s')"
	return out
}

var destinations = []string{"postgres", "mysql", "clickhouse", "iceberg"}

func setup(t *testing.T, kind string) *env {
	ctx := routestest.Context(t, 2*time.Minute)
	e := &env{t: t, ctx: ctx, src: cdctest.Open(t, ctx, "mysql"), dst: cdctest.Open(t, ctx, kind)}
	e.cfg = Config{SourceURL: e.src.URL, DestURL: e.dst.URL, Tables: []Pair{{Source: e.src.Ref("items"), Dest: e.dst.Ref("items")}}}
	if kind == "clickhouse" {
		// a killed run's lock expires soon (killLease); DATETIME(6) into
		// 18.16's DateTime drops the microseconds
		e.cfg.DestURL = e.dst.URLWith("lease=2s&subseconds=truncate")
	}
	e.exec(fmt.Sprintf(createItems, e.src.Table("items")))
	for i := 1; i <= 40; i++ {
		e.exec(fmt.Sprintf(`INSERT INTO %s VALUES (%d, 'row %d', %d, NULL, 'green', 'a,c', %d.25, '2024-01-02 03:04:05.123456', %d, 4000000000, x'00ff')`,
			e.src.Table("items"), i, i, i*10, i, i%2))
	}
	return e
}

func (e *env) exec(q string) { e.t.Helper(); e.src.Exec(e.t, e.ctx, q) }

// srcHash is the source's hash in the destination's terms: SQL, or with
// an Iceberg destination the canonical rows read through the route.
func (e *env) srcHash() string {
	e.t.Helper()
	if e.dst.Kind == "iceberg" {
		return e.src.RowsHash(e.t, e.ctx, "items", exprs["iceberg"])
	}
	return e.src.Hash(e.t, e.ctx, "items", e.srcExprs(), "id")
}

// runOK is run, retried while an Iceberg table's lease is still held by a
// run a test killed (it expires after the fixture's lease=5s).
func (e *env) runOK() Result {
	e.t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		res, err := Run(e.ctx, e.cfg)
		if err == nil {
			return res
		}
		if !errors.Is(err, routes.ErrLocked) || time.Now().After(deadline) {
			e.t.Fatalf("run: %v", err)
		}
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

func (e *env) assertEqual(step string) {
	e.t.Helper()
	s := e.srcHash()
	d := e.dst.Hash(e.t, e.ctx, "items", exprs[e.dst.Kind], "id")
	if s != d {
		e.t.Fatalf("%s: destination %s != source %s", step, d, s)
	}
}

// workload touches every kind of change: inserts, updates, a key change,
// deletes, an enum/set change, a wide row, a delete and re-insert.
func (e *env) workload() {
	tbl := e.src.Table("items")
	e.exec(`INSERT INTO ` + tbl + ` (id, name, n, color, flags, raw) VALUES (100, 'new', 1, 'blue', 'b', x'0a0b'), (101, 'new2', 2, NULL, '', NULL)`)
	e.exec(`UPDATE ` + tbl + ` SET name = CONCAT(name, '!'), n = n + 1, color = 'red', flags = 'a,b,c' WHERE id % 3 = 0`)
	e.exec(`UPDATE ` + tbl + ` SET id = 1000 WHERE id = 7`)
	e.exec(`DELETE FROM ` + tbl + ` WHERE id BETWEEN 20 AND 25`)
	e.exec(`INSERT INTO ` + tbl + ` (id, name, big) VALUES (500, 'wide', REPEAT('x', 100000))`)
	e.exec(`UPDATE ` + tbl + ` SET ok = 1 - ok, price = price * 2, at = '2025-06-07 08:09:10.5' WHERE id < 5`)
	e.exec(`DELETE FROM ` + tbl + ` WHERE id = 1`)
	e.exec(`INSERT INTO ` + tbl + ` (id, name) VALUES (1, 'again')`)
}

func TestRun_Workload(t *testing.T) {
	// chunks of 2: the window is applied two changes at a time inside the
	// one transaction, so key changes and a TRUNCATE (of rows an earlier
	// chunk wrote) cross chunk boundaries.
	for _, kind := range destinations {
		for _, flush := range []int{0, 2} {
			t.Run(chunksName(kind, flush), func(t *testing.T) {
				if flush > 0 {
					old := cdc.FlushChanges
					cdc.FlushChanges = flush
					t.Cleanup(func() { cdc.FlushChanges = old })
				}
				workloadRuns(t, setup(t, kind))
			})
		}
	}
}

// chunksName names a subtest by destination and chunk size (0: default).
func chunksName(kind string, flush int) string {
	if flush == 0 {
		return kind + "/default chunks"
	}
	return fmt.Sprintf("%s/chunks of %d", kind, flush)
}

func workloadRuns(t *testing.T, e *env) {
	// Writes after the coordinate, before the load: the load
	// sees them and the next run replays them.
	setFailpoint(t, func(stage string) error {
		if stage == "bootstrap-copy" {
			e.workload()
		}
		return nil
	})
	if res := e.run(); !res.Bootstrap || res.Rows == 0 {
		t.Fatalf("bootstrap = %+v", res)
	}
	setFailpoint(t, nil)
	if res := e.run(); res.Changes == 0 {
		t.Fatalf("replay run = %+v, want the changes made during the bootstrap", res)
	}
	e.assertEqual("after replaying the bootstrap's changes")
	e.exec(`UPDATE ` + e.src.Table("items") + ` SET n = n + 7, id = id + 2000 WHERE id IN (2, 3)`)
	e.exec(`DELETE FROM ` + e.src.Table("items") + ` WHERE id = 30`)
	e.exec(`UPDATE ` + e.src.Table("items") + ` SET name = 'moved' WHERE id = 2002`)
	e.exec(`UPDATE ` + e.src.Table("items") + ` SET id = 3003 WHERE id = 2003`)
	e.run()
	e.assertEqual("after the second window")
	// Rows written before the TRUNCATE in the same run (an earlier
	// chunk) must go too.
	e.exec(`INSERT INTO ` + e.src.Table("items") + ` (id, name) VALUES (900, 'before truncate')`)
	e.exec(`UPDATE ` + e.src.Table("items") + ` SET n = n + 1 WHERE id = 4`)
	e.exec(`TRUNCATE TABLE ` + e.src.Table("items"))
	e.exec(`INSERT INTO ` + e.src.Table("items") + ` (id, name) VALUES (1, 'after truncate'), (2, 'b')`)
	e.exec(`UPDATE ` + e.src.Table("items") + ` SET name = 'B' WHERE id = 2`)
	if res := e.run(); res.Truncates != 1 {
		t.Errorf("truncates = %d, want 1 (%+v)", res.Truncates, res)
	}
	e.assertEqual("after truncate")
	if res := e.run(); res.Changes != 0 {
		t.Errorf("idle run = %+v, want no changes", res)
	}
}

func TestRun_FailureInsideApply(t *testing.T) {
	// chunks of 2: every chunk applied, then the failure; none may land.
	for _, kind := range destinations {
		for _, flush := range []int{0, 2} {
			t.Run(chunksName(kind, flush), func(t *testing.T) {
				if flush > 0 {
					old := cdc.FlushChanges
					cdc.FlushChanges = flush
					t.Cleanup(func() { cdc.FlushChanges = old })
				}
				failureInsideApply(t, setup(t, kind))
			})
		}
	}
}

func failureInsideApply(t *testing.T, e *env) {
	kind := e.dst.Kind
	e.run()
	e.workload()
	e.exec(`TRUNCATE TABLE ` + e.src.Table("items"))
	e.exec(`INSERT INTO ` + e.src.Table("items") + ` (id, name) VALUES (5, 'post')`)
	before := e.dst.Hash(t, e.ctx, "items", exprs[kind], "id")
	routes.SetCheckpointHook(func(s string) error {
		if s == "apply-before-commit" {
			return errors.New("injected failure")
		}
		return nil
	})
	t.Cleanup(func() { routes.SetCheckpointHook(nil) })
	if _, err := Run(e.ctx, e.cfg); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("run with failure = %v, want the injected failure", err)
	}
	if got := e.dst.Hash(t, e.ctx, "items", exprs[kind], "id"); got != before {
		t.Fatalf("failed apply changed the destination")
	}
	routes.SetCheckpointHook(nil)
	e.run()
	e.assertEqual("re-run after failure")
}

// TestRun_ServerChanged: a position saved from another server (a
// failover to a replica: its binlog's names and offsets are its own) is
// refused with the fix, by a run and by Status, never resumed from; old
// positions without a server_id still resume.
func TestRun_ServerChanged(t *testing.T) {
	e := setup(t, "mysql")
	res := e.run()
	saved, err := ParsePosition(res.To)
	if err != nil || saved.Server == 0 {
		t.Fatalf("bootstrap position %q (%v): want a server_id in it", res.To, err)
	}
	other := saved
	other.Server = saved.Server + 1
	e.dst.Exec(t, e.ctx, "UPDATE "+e.dst.Table("_weir_state")+" SET position = ?", other.String())
	_, err = Run(e.ctx, e.cfg)
	var lost *PositionLostError
	if !errors.As(err, &lost) || !errors.Is(err, ErrPositionLost) || lost.Server != saved.Server ||
		!strings.Contains(err.Error(), "server_id") || !strings.Contains(err.Error(), "weir reset") {
		t.Fatalf("run from another server's position = %v, want a PositionLostError naming both server_ids and weir reset", err)
	}
	lag, err := Status(e.ctx, e.cfg)
	if err != nil || !lag.Lost || !strings.Contains(lag.Problem, "server_id") {
		t.Fatalf("status = %+v, %v; want lost, naming the server change", lag, err)
	}
	// A position saved before server_ids were recorded resumes as before.
	old := saved
	old.Server = 0
	e.dst.Exec(t, e.ctx, "UPDATE "+e.dst.Table("_weir_state")+" SET position = ?", old.String())
	e.exec(`INSERT INTO ` + e.src.Table("items") + ` (id, name) VALUES (900, 'after')`)
	if res := e.run(); res.Bootstrap {
		t.Fatalf("run from a position without server_id = %+v, want an incremental run", res)
	}
	e.assertEqual("resumed from a position without server_id")
}

// TestRun_PurgedBinlog points the saved position at a binlog file the
// server does not have (purging the shared server's binlogs is not an
// option in a test) and expects the loss reported with the fix.
func TestRun_PurgedBinlog(t *testing.T) {
	e := setup(t, "mysql")
	e.run()
	e.dst.Exec(t, e.ctx, "UPDATE "+e.dst.Table("_weir_state")+" SET position = 'mysql-bin.000000:4'")
	_, err := Run(e.ctx, e.cfg)
	var lost *PositionLostError
	if !errors.As(err, &lost) || !errors.Is(err, ErrPositionLost) || !strings.Contains(err.Error(), "weir reset") {
		t.Fatalf("run from a purged file = %v, want a PositionLostError naming weir reset", err)
	}
	if err := Drop(e.ctx, e.cfg); err != nil {
		t.Fatal(err)
	}
	if res := e.run(); !res.Bootstrap {
		t.Fatalf("run after reset = %+v, want a bootstrap", res)
	}
	e.assertEqual("after re-bootstrap")
}

func TestPosition_RoundTrip(t *testing.T) {
	tests := []Position{
		{File: "mysql-bin.000003", Pos: 1234},
		{File: "mysql-bin.000003", Pos: 4, GTID: "0-1-42,1-2-7"},
		{File: "binlog.000010", Pos: 99, GTID: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5"},
		{File: "mysql-bin.000004", Pos: 7, GTID: "0-1-9", Server: 1},
		{File: "mysql-bin.000005", Pos: 8, Server: 4294967295},
	}
	for _, p := range tests {
		t.Run(p.String(), func(t *testing.T) {
			got, err := ParsePosition(p.String())
			if err != nil || got != p {
				t.Fatalf("ParsePosition(%q) = %+v, %v", p.String(), got, err)
			}
		})
	}
	if (Position{File: "b.000002", Pos: 1}).Before(Position{File: "b.000001", Pos: 9}) {
		t.Error("a later file sorts before an earlier one")
	}
}

func setFailpoint(t *testing.T, fn func(string) error) {
	t.Cleanup(routes.SetCheckpointHook(fn))
}
