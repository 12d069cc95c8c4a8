package faults_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/cdc/binlog"
	"github.com/weirhq/weir/cdc/capture"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/cdc/pgwal"
	_ "github.com/weirhq/weir/routes/mysql" // capture.Drop opens the pair's routes in this process
	_ "github.com/weirhq/weir/routes/postgres"
	"github.com/weirhq/weir/routes/routestest"
)

// cdcSources are the log_based sources killed into each destination that
// applies changes: the PostgreSQL WAL and the MySQL/MariaDB binlog.
var cdcSources = []string{"postgres", "mysql"}

// cdcPhase maps one of the matrix's five phases onto a log_based run. The
// first two kill a bootstrap (the pair has no position), the last three a
// run that drains and applies the log since the saved position.
type cdcPhase struct {
	name       string // the matrix's phase (the subtest's name)
	checkpoint string // WEIR_FAULT_PAUSE for the killed run
	bootstrap  bool
}

var cdcPhases = []cdcPhase{
	// The slot exists and its snapshot is exported (binlog: the coordinate
	// is read); nothing is copied yet. The next run finds a stale slot.
	{"probe", "probe", true},
	// A bootstrap pipe handed its first batch to the staging table.
	{"mid-copy", "mid-copy", true},
	// The window is applied inside the apply transaction; the position is not written.
	{"before-commit", "apply-before-state", false},
	// Window and position written, COMMIT not sent.
	{"commit", "apply-before-commit", false},
	// Committed; the slot not confirmed yet (binlog: the report not printed).
	{"after-commit", "after-commit", false},
}

const (
	cdcRows = 3000 // the source's rows before the first run
	// One workload: cdcInserts new rows, cdcUpdates updated, cdcDeletes
	// deleted, each row one change in the log.
	cdcInserts, cdcUpdates, cdcDeletes = 100, 50, 30
	cdcWorkload                        = cdcInserts + cdcUpdates + cdcDeletes
)

// cdcCols render each column as the same text on PostgreSQL and MySQL.
var cdcCols = []string{"id", "name", "amount"}

// killLogBased runs the five phases of log_based from each source into
// dstKind, one after the other on one pair. Each case changes the source
// (inserts, updates, deletes), kills the run at its phase, checks what
// readers see and the saved position, changes the source again, runs to
// the end and checks: the destination equals the source (ordered hash in
// SQL), the re-run drained exactly the changes not yet committed (none lost,
// none applied twice), the slot never ran ahead of the saved position, and
// no staging table is left. The pair's slot is dropped at the end.
func killLogBased(t *testing.T, dstKind string) {
	for _, srcKind := range cdcSources {
		t.Run(srcKind, func(t *testing.T) {
			e := newCDCEnv(t, srcKind, dstKind)
			for i, ph := range cdcPhases {
				runCase(t, ph.name, func(t *testing.T) { e.killCase(t, i, ph) })
			}
			runCase(t, "reset", func(t *testing.T) { e.reset(t, true) })
		})
	}
}

// cdcEnv is one (source, destination) log_based pair of the matrix.
type cdcEnv struct {
	ctx      context.Context
	src, dst *cdctest.DB
	pairs    []cdc.Pair
	args     []string // the weir command line of one run
	slot     string   // PostgreSQL source: the pair's slot and publication
	lastTo   string   // the position the last completed run committed
	nextID   int64    // the next id a workload inserts
}

func newCDCEnv(t *testing.T, srcKind, dstKind string) *cdcEnv {
	ctx := routestest.Context(t, 5*time.Minute)
	e := &cdcEnv{ctx: ctx, src: cdctest.Open(t, ctx, srcKind), dst: cdctest.Open(t, ctx, dstKind), nextID: cdcRows + 1}
	e.pairs = []cdc.Pair{{Source: e.src.Ref("t"), Dest: e.dst.Ref("t")}}
	typ := map[string]string{"postgres": "bigint PRIMARY KEY, name varchar(64) NOT NULL, amount numeric(12,2)",
		"mysql": "BIGINT PRIMARY KEY, name VARCHAR(64) NOT NULL, amount DECIMAL(12,2)"}[srcKind]
	e.src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id %s)", e.src.Table("t"), typ))
	e.src.Exec(t, ctx, insertRows(e.src.Table("t"), 1, cdcRows))
	if srcKind == "postgres" {
		name, err := pgwal.Config{SourceURL: e.src.URL, DestURL: e.dst.URL, Tables: e.pairs}.Name()
		if err != nil {
			t.Fatal(err)
		}
		e.slot = name
		t.Cleanup(func() { dropSlot(t, e.src.URL, name) })
		// The PostgreSQL source runs through weir transfer, the binlog
		// through weir once and a dagfile: both CLI paths of log_based.
		e.args = []string{"transfer", e.src.URL, e.dst.URL, "--mode", "log_based", "--table", e.src.Schema + ".t",
			"--dest-schema", e.dst.Schema, "--json"}
		return e
	}
	path := filepath.Join(t.TempDir(), "weir.yaml")
	dag := fmt.Sprintf("version: 1\nconnections:\n  src: %s\n  dst: %s\ntasks:\n  cdc:\n    transfer: {from: src, table: %s.t, to: dst, dest_table: %s.t, mode: log_based}\n",
		e.src.URL, e.dst.URL, e.src.Schema, e.dst.Schema)
	if err := os.WriteFile(path, []byte(dag), 0o644); err != nil {
		t.Fatal(err)
	}
	e.args = []string{"once", "-f", path, "--task", "cdc", "--json"}
	return e
}

// insertRows is one INSERT of rows lo..hi, the same SQL on both servers.
func insertRows(table string, lo, hi int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (id, name, amount) VALUES ", table)
	for id := lo; id <= hi; id++ {
		if id > lo {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, 'row %d', %d.%02d)", id, id, id%1000, id%100)
	}
	return b.String()
}

// workload changes the source: cdcInserts new rows, then cdcUpdates and
// cdcDeletes of rows loaded at the start, from a range of 100 ids that no
// other workload touches (n numbers the workload), so each statement
// changes exactly that many rows.
func (e *cdcEnv) workload(t *testing.T, n int) {
	t.Helper()
	e.src.Exec(t, e.ctx, insertRows(e.src.Table("t"), e.nextID, e.nextID+cdcInserts-1))
	e.nextID += cdcInserts
	lo := int64(n*100 + 1)
	e.src.Exec(t, e.ctx, fmt.Sprintf("UPDATE %s SET name = concat(name, ' u%d'), amount = amount + 1 WHERE id BETWEEN %d AND %d",
		e.src.Table("t"), n, lo, lo+cdcUpdates-1))
	e.src.Exec(t, e.ctx, fmt.Sprintf("DELETE FROM %s WHERE id BETWEEN %d AND %d", e.src.Table("t"), lo+cdcUpdates, lo+cdcUpdates+cdcDeletes-1))
}

// killCase is one phase: workload, kill, checks, workload, re-run, checks.
func (e *cdcEnv) killCase(t *testing.T, i int, ph cdcPhase) {
	if ph.bootstrap && i > 0 {
		e.reset(t, false) // the next run bootstraps again
	}
	exists := i > 0
	before := e.hash(t, exists)
	saved := e.saved(t)
	e.workload(t, 2*i)
	atKill := e.src.Hash(t, e.ctx, "t", cdcCols, "id")
	checkpoint := ph.checkpoint
	if ph.name == "mid-copy" && e.src.Kind == "postgres" && e.dst.Kind == "postgres" {
		// PG→PG bootstraps through the binary COPY passthrough, which has
		// no per-batch checkpoint: kill with every row in the staging
		// table, before the bootstrap's commit.
		checkpoint = "before-commit"
	}
	p := e.startPaused(t, checkpoint)
	if ph.name == "commit" && e.slot != "" {
		// The paused run streams from the slot: a second run is refused
		// as locked (exit 75), not failed, so schedulers retry it.
		if r := weir(e.ctx, t, nil, e.args...); r.code != 75 {
			t.Fatalf("a second run while the slot is in use: want exit 75, got %s", r)
		}
	}
	p.kill()
	got, now := e.hash(t, exists), e.saved(t)
	switch {
	case ph.name == "after-commit":
		if got != atKill {
			t.Fatalf("killed after the commit, readers see %s, not the committed window (the source is %s)", got, atKill)
		}
		if now == saved {
			t.Fatalf("killed after the commit, the saved position is still %s", saved)
		}
		if e.slot != "" && !e.checkSlot(t, now) {
			t.Fatalf("killed after the commit, the slot is already confirmed to the saved position %s", now)
		}
	case got != before:
		t.Fatalf("killed at %s, readers see %s, not the previous table %s", checkpoint, got, before)
	case now != saved:
		t.Fatalf("killed at %s, the saved position moved from %q to %q", checkpoint, saved, now)
	}
	e.checkSlot(t, now)
	e.workload(t, 2*i+1)
	res := e.run(t)
	switch {
	case ph.bootstrap:
		if n := e.rowCount(t); !res.Bootstrap || res.Rows != n {
			t.Fatalf("the run after the kill = %+v, want a bootstrap of the source's %d rows", res, n)
		}
	case res.Bootstrap || res.From != now:
		t.Fatalf("the run after the kill = %+v, want a drain from the saved position %s", res, now)
	case ph.name == "after-commit" && res.Changes != cdcWorkload:
		t.Fatalf("the run after a kill past the commit drained %d changes, want only the %d made since", res.Changes, cdcWorkload)
	case ph.name != "after-commit" && res.Changes != 2*cdcWorkload:
		t.Fatalf("the run after a kill before the commit drained %d changes, want the %d of the lost window and since", res.Changes, 2*cdcWorkload)
	}
	if got := e.saved(t); got != res.To {
		t.Fatalf("saved position %q, the run reported %q", got, res.To)
	}
	e.checkSlot(t, res.To)
	e.lastTo = res.To
	if s, d := e.src.Hash(t, e.ctx, "t", cdcCols, "id"), e.hash(t, true); s != d {
		t.Fatalf("the run after the kill left %s, the source is %s", d, s)
	}
	if left := e.staging(t); left != "0" {
		t.Fatalf("%s staging tables left after the run", left)
	}
}

// startPaused starts the run to be killed, retried while it exits 75: the
// server process of the previous run's replication connection may hold the
// slot for a moment after that run ended.
func (e *cdcEnv) startPaused(t *testing.T, phase string) *paused {
	t.Helper()
	for {
		p, ok := tryPaused(e.ctx, t, phase, e.args...)
		if ok {
			return p
		}
		if code := p.wait(); code != 75 || e.ctx.Err() != nil {
			t.Fatalf("weir ended without pausing at %s: exit %d, stderr:\n%s", phase, code, p.stderr)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// run runs weir to its end, retried while it exits 75 (the killed run's
// slot is still active for a moment), and returns its CDC report.
func (e *cdcEnv) run(t *testing.T) cdc.Result {
	t.Helper()
	r := weirRetry(e.ctx, t, e.args...)
	if r.code != 0 {
		t.Fatalf("the run after the kill: %s", r)
	}
	var rep struct {
		CDC *cdc.Result `json:"cdc"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.CDC == nil {
		t.Fatalf("report %q: %v", r.stdout, err)
	}
	return *rep.CDC
}

// reset forgets the pair's positions (and drops a PostgreSQL slot and
// publication), as weir.ResetLogBased does; check says the position and
// the slot must then be gone.
func (e *cdcEnv) reset(t *testing.T, check bool) {
	t.Helper()
	if err := capture.Drop(e.ctx, e.src.URL, e.dst.URL, e.pairs); err != nil {
		t.Fatalf("reset the pair: %v", err)
	}
	if !check {
		return
	}
	if pos := e.saved(t); pos != "" {
		t.Fatalf("the saved position is %q after the reset", pos)
	}
	if e.slot != "" {
		if n := e.src.Query(t, e.ctx, "SELECT count(*)::text FROM pg_replication_slots WHERE slot_name = $1", e.slot); n != "0" {
			t.Fatalf("slot %s still exists after the reset", e.slot)
		}
	}
}

// hash is the destination table's ordered hash; "absent" when the table
// does not exist and may not (before the first run).
func (e *cdcEnv) hash(t *testing.T, mustExist bool) string {
	t.Helper()
	n := e.dst.Query(t, e.ctx, fmt.Sprintf("SELECT concat('', count(*)) FROM information_schema.tables WHERE table_schema = '%s' AND table_name = 't'", e.dst.Schema))
	if n == "0" && !mustExist {
		return "absent"
	}
	return e.dst.Hash(t, e.ctx, "t", cdcCols, "id")
}

func (e *cdcEnv) rowCount(t *testing.T) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(e.src.Query(t, e.ctx, "SELECT concat('', count(*)) FROM "+e.src.Table("t")), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// saved is the position the destination holds for the pair ("" before
// the first commit and after a reset).
func (e *cdcEnv) saved(t *testing.T) string {
	t.Helper()
	q := fmt.Sprintf("SELECT concat('', count(*)) FROM information_schema.tables WHERE table_schema = '%s' AND table_name = '_weir_state'", e.dst.Schema)
	if e.dst.Query(t, e.ctx, q) == "0" {
		return ""
	}
	return e.dst.Query(t, e.ctx, fmt.Sprintf("SELECT coalesce(max(position), '') FROM %s", e.dst.Table("_weir_state")))
}

// staging counts the weir staging tables left in the destination schema.
func (e *cdcEnv) staging(t *testing.T) string {
	t.Helper()
	return e.dst.Query(t, e.ctx, fmt.Sprintf(`SELECT concat('', count(*)) FROM information_schema.tables WHERE table_schema = '%s' AND table_name LIKE '\_weir\_stage%%'`, e.dst.Schema))
}

// checkSlot checks, for a PostgreSQL source, that the pair's slot is
// usable and never confirmed past the saved position (WAL the destination
// does not have would be gone); for a binlog source, that the saved
// coordinate parses and never went back. It says whether the slot is
// confirmed short of the saved position (always false for the binlog).
func (e *cdcEnv) checkSlot(t *testing.T, saved string) (behind bool) {
	t.Helper()
	if saved == "" {
		return false
	}
	if e.slot == "" {
		pos, err := binlog.ParsePosition(saved)
		if err != nil {
			t.Fatalf("saved position %q: %v", saved, err)
		}
		if e.lastTo == "" {
			return false
		}
		if last, err := binlog.ParsePosition(e.lastTo); err != nil || pos.Before(last) {
			t.Fatalf("saved position %s is behind the last committed %s (%v)", saved, e.lastTo, err)
		}
		return false
	}
	st := e.src.Query(t, e.ctx, "SELECT coalesce((SELECT confirmed_flush_lsn::text || ' ' || coalesce(wal_status, '') FROM pg_replication_slots WHERE slot_name = $1), '')", e.slot)
	lsn, status, _ := strings.Cut(st, " ")
	if st == "" || status == "lost" {
		t.Fatalf("slot %s is %q with the saved position %s", e.slot, st, saved)
	}
	confirmed, err := pglogrepl.ParseLSN(lsn)
	if err != nil {
		t.Fatal(err)
	}
	want, err := pglogrepl.ParseLSN(saved)
	if err != nil {
		t.Fatalf("saved position %q: %v", saved, err)
	}
	if confirmed > want {
		t.Fatalf("slot %s confirmed %s, past the saved position %s: the changes between are lost", e.slot, confirmed, want)
	}
	return confirmed < want
}

// dropSlot drops a pair's slot and publication whatever the test did, so
// no logical slot is left retaining WAL on the shared server. A killed
// run's slot stays active for a moment (55006): retry.
func dropSlot(t *testing.T, url, name string) {
	ctx, cancel := routestest.CleanupContext()
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Errorf("drop slot %s: %v", name, err)
		return
	}
	defer conn.Close(ctx)
	for {
		_, err = conn.Exec(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1", name)
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Errorf("slot %s left on the server: %v", name, err)
	}
	if _, err := conn.Exec(ctx, "DROP PUBLICATION IF EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Errorf("publication %s left on the server: %v", name, err)
	}
}
