package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
	_ "github.com/weirhq/weir/routes/clickhouse"
	"github.com/weirhq/weir/routes/clickhouse/clickhousetest"
	_ "github.com/weirhq/weir/routes/mysql"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
)

// tableYAML has two stream tasks over one Postgres table: append paging
// on the integer primary key, merge paging on a timestamp with ties (so
// the key is (ts, id)) through a contract. SRC is the source schema, SINK.
// the sink's connection and schema, CONN the sink connection.
const tableYAML = `version: 1
connections:
  src: ${WEIR_TEST_PG}
  CONN
tasks:
  tb_append:
    stream: {source: src, table: SRC.src, cursor: id, chunk_size: 10, sink: SINK.tb_append}
  tb_merge:
    stream: {source: src, table: SRC.src, cursor: ts, chunk_size: 10, sink: SINK.tb_merge, materialization: merge, key: [id]}
    contract:
      columns:
        - {name: id, type: BIGINT, required: true}
        - {name: ts, type: TIMESTAMPTZ}
        - {name: amount, type: "DECIMAL(12,2)"}
        - {name: v, type: VARCHAR}
      rules:
        - range: {column: amount, min: 0}
  tb_cont:
    stream: {source: src, table: SRC.src, cursor: id, chunk_size: 25, sink: SINK.tb_cont, trigger: continuous, batch_interval: 200ms}
`

// tableBase: ids run up to 2^63-1, so a cursor near the top must compare
// exactly.
const tableBase = int64(9223372036854775807 - 200)

// newTableDAG creates the source table in a fresh Postgres schema and the
// dagfile writing to a Postgres schema or an embedded Iceberg lake.
func newTableDAG(t *testing.T, sink string) (*streamDAG, *postgrestest.Fixture) {
	t.Helper()
	fx := postgrestest.New(t)
	fx.Exec(t, testContext(t), "CREATE TABLE "+fx.Schema+".src (id int8 PRIMARY KEY, ts timestamptz NOT NULL, amount numeric(12,2), v text)")
	d := &streamDAG{dir: t.TempDir()}
	d.path = filepath.Join(d.dir, "weir.yaml")
	conn, sinkConn := "", "src"
	switch sink {
	case "postgres":
		d.schema, d.sinkURL = fx.Schema, os.Getenv(postgrestest.Env)
	case "iceberg":
		conn, sinkConn = "lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake", "lake"
		d.schema, d.sinkURL = "raw", ResolveURL("iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake", d.dir)
	}
	body := strings.NewReplacer("CONN", conn, "SRC.", fx.Schema+".", "SINK.", sinkConn+":"+d.schema+".").Replace(tableYAML)
	writeFile(t, d.path, body)
	return d, fx
}

// insertRows adds rows first..first+n-1: id tableBase+i, ts in groups of
// four equal values a second and a microsecond apart, every 9th amount
// negative (the merge task's contract quarantines it).
func insertRows(t *testing.T, fx *postgrestest.Fixture, first, n int) {
	t.Helper()
	fx.Exec(t, testContext(t), fmt.Sprintf(`INSERT INTO %s.src SELECT %d + g, timestamptz '2024-03-01 00:00:00.000001+00' + (g / 4) * interval '1.000001 second',
  CASE WHEN g %% 9 = 0 THEN -g ELSE g * 1.25 END, 'row ' || g FROM generate_series(%d, %d) g`, fx.Schema, tableBase, first, first+n-1))
}

func tableIDs(first, last int, good bool) []string {
	var out []string
	for i := first; i <= last; i++ {
		if !good || i%9 != 0 {
			out = append(out, fmt.Sprint(tableBase+int64(i)))
		}
	}
	return out
}

// TestStream_TableKillResume: a table source backfilled in chunks, with
// runs killed after a chunk's sink commit and before it, then run again
// after more rows arrived, holds every row once (append: exactly once
// too, the cursor resumes after the last committed chunk), with its
// values as in the source; bad rows are in the quarantine; available_now
// ends when the table is read to its end, and a later run reads only the
// new rows.
func TestStream_TableKillResume(t *testing.T) {
	for _, sink := range streamSinks {
		t.Run(sink, func(t *testing.T) {
			t.Parallel()
			d, fx := newTableDAG(t, sink)
			insertRows(t, fx, 1, 45)
			for _, task := range []string{"tb_append", "tb_merge"} {
				runKilled(t, d.path, task, sourceCommitPhase) // chunk 1 committed
				if sink == "postgres" {
					// Iceberg's lease of a killed run outlives the test
					// (routes/iceberg DefaultLeaseTTL).
					runKilled(t, d.path, task, "poll")          // chunk 2 read, not written
					runKilled(t, d.path, task, "before-commit") // chunk 2 written, not committed
					runKilled(t, d.path, task, sourceCommitPhase)
				}
			}
			insertRows(t, fx, 46, 30)
			r, err := Load(d.path, Options{Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for _, task := range []string{"tb_append", "tb_merge"} {
				rep := once(t, r, task)
				t.Logf("%s: %d rows in, %d out, %d quarantined, cursor %q → %q", task, rep.RowsIn, rep.RowsOut, rep.Quarantined,
					rep.Offsets[streamMark].From, rep.Offsets[streamMark].To)
				if rep.Offsets[streamMark].From == "" {
					t.Errorf("%s: the run after the kills started from the table's start", task)
				}
			}
			if got := sortedIDs(d.rows(t, "tb_append", "id")); !slices.Equal(got, tableIDs(1, 75, false)) {
				t.Errorf("append: ids %v, want each of 1..75 exactly once", got)
			}
			if got := sortedIDs(d.rows(t, "tb_merge", "id")); !slices.Equal(got, tableIDs(1, 75, true)) {
				t.Errorf("merge: ids %v, want the good ones of 1..75 exactly once", got)
			}
			if q := d.rows(t, "tb_merge"+QuarantineSuffix, "_weir_payload"); len(q) < 8 || !strings.Contains(strings.Join(q, "\n"), fmt.Sprintf(`"id":%d`, tableBase+9)) {
				t.Errorf("quarantine: %q, want the 8 rows with a negative amount as JSON", q)
			}
			// Values round-trip: the sink's (id → ts, amount) are the source's.
			want := columnsByID(t, fx.URL(), fx.Schema, "src", "ts", "amount")
			for _, task := range []string{"tb_append", "tb_merge"} {
				got := columnsByID(t, d.sinkURL, d.schema, task, "ts", "amount")
				for id, v := range got {
					if want[id] != v {
						t.Errorf("%s: id %s holds %q, the source %q", task, id, v, want[id])
					}
				}
			}
			// A run with nothing new reads nothing; new rows are picked up.
			if rep := once(t, r, "tb_append"); rep.RowsIn != 0 {
				t.Errorf("a run with nothing new read %d rows", rep.RowsIn)
			}
			insertRows(t, fx, 76, 3)
			if rep := once(t, r, "tb_append"); rep.RowsIn != 3 {
				t.Errorf("a run after 3 new rows read %d", rep.RowsIn)
			}
			if got := sortedIDs(d.rows(t, "tb_append", "id")); !slices.Equal(got, tableIDs(1, 78, false)) {
				t.Errorf("append after new rows: ids %v, want 1..78 once", got)
			}
		})
	}
}

// TestStream_TableContinuous: a continuous table task keeps polling and
// picks up rows inserted while it runs; cancelled, it returns cleanly.
func TestStream_TableContinuous(t *testing.T) {
	d, fx := newTableDAG(t, "postgres")
	insertRows(t, fx, 1, 60)
	r, err := Load(d.path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := r.Once(ctx, "tb_cont")
		done <- err
	}()
	waitFor(t, time.Minute, func() bool { return tableHas(t, d, "tb_cont", 60) })
	insertRows(t, fx, 61, 5)
	waitFor(t, time.Minute, func() bool { return tableHas(t, d, "tb_cont", 65) })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("after cancel: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("still running 30 s after cancel")
	}
	if got := sortedIDs(d.rows(t, "tb_cont", "id")); !slices.Equal(got, tableIDs(1, 65, false)) {
		t.Errorf("ids %v, want 1..65 once", got)
	}
}

// TestStream_TableBadInput: a missing table or cursor column fails the
// run before any row moves, as bad input naming the table and the column.
func TestStream_TableBadInput(t *testing.T) {
	d, fx := newTableDAG(t, "postgres")
	for _, tc := range []struct{ from, to, want string }{
		{"table: " + fx.Schema + ".src, cursor: id", "table: " + fx.Schema + ".nope, cursor: id", fx.Schema + ".nope.id: table source: "},
		{"table: " + fx.Schema + ".src, cursor: id", "table: " + fx.Schema + ".src, cursor: idd", fx.Schema + ".src.idd: the cursor column does not exist"},
	} {
		data, _ := os.ReadFile(d.path)
		body := strings.Replace(string(data), tc.from, tc.to, 1)
		path := filepath.Join(t.TempDir(), "weir.yaml")
		writeFile(t, path, body)
		r, err := Load(path, Options{Log: testLog{t}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Once(testContext(t), "tb_append")
		t.Logf("%s: %v", tc.to, err)
		r.Close()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "cursor:") {
			t.Errorf("%s: %v, want an error with %q and what to do", tc.to, err, tc.want)
		}
		if !errors.Is(err, routes.ErrBadInput) {
			t.Errorf("%s: %v is not bad input (exit 2)", tc.to, err)
		}
	}
}

// sortedIDs sorts decimal ids of one width.
func sortedIDs(ids []string) []string {
	slices.Sort(ids)
	return ids
}

// columnsByID reads a table's id and columns, as text, keyed by id.
func columnsByID(t *testing.T, url, schema, table string, cols ...string) map[string]string {
	t.Helper()
	ctx := testContext(t)
	ep, err := routes.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	src := ep.(routes.Source)
	info, err := src.Probe(ctx, routes.TableRef{Schema: schema, Name: table})
	if err != nil {
		t.Fatalf("probe %s: %v", table, err)
	}
	s, err := incremental.ReadTable(ctx, src, info, routes.Budget{}.Fill(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	out := map[string]string{}
	for s.Next() {
		rec := s.RecordBatch()
		idc := rec.Column(rec.Schema().FieldIndices("id")[0])
		for i := range idc.Len() {
			var vals []string
			for _, c := range cols {
				vals = append(vals, rec.Column(rec.Schema().FieldIndices(c)[0]).ValueStr(i))
			}
			out[idc.ValueStr(i)] = strings.Join(vals, " | ")
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s.%s is empty", schema, table)
	}
	return out
}

// mysqlTableYAML reads two MariaDB tables into Postgres: one paging on an
// unsigned key above 2^63, one on a DATETIME(6) column with ties and no
// primary key (each chunk takes every tie of its last value).
const mysqlTableYAML = `version: 1
connections:
  my: MYURL
  pg: ${WEIR_TEST_PG}
tasks:
  my_ids:
    stream: {source: my, table: DB.ids, cursor: id, chunk_size: 4, sink: pg:S.my_ids}
  my_ties:
    stream: {source: my, table: DB.ties, cursor: created, chunk_size: 3, sink: pg:S.my_ties, materialization: merge, key: [seq]}
`

// TestStream_TableMySQL: a MariaDB table source backfills in chunks into
// Postgres, resumes after a kill past a sink commit, picks up new rows,
// and keeps unsigned keys and microsecond times exact.
func TestStream_TableMySQL(t *testing.T) {
	my := mysqltest.New(t)
	pg := postgrestest.New(t)
	ctx := testContext(t)
	my.Exec(t, ctx, "CREATE TABLE ids (id BIGINT UNSIGNED PRIMARY KEY, v VARCHAR(20))",
		"CREATE TABLE ties (seq BIGINT, created DATETIME(6), v VARCHAR(20))")
	insert := func(first, n int) {
		var ids, ties []string
		for i := first; i < first+n; i++ {
			ids = append(ids, fmt.Sprintf("(%d, 'v%d')", uint64(18446744073709551615)-uint64(100-i), i))
			ties = append(ties, fmt.Sprintf("(%d, TIMESTAMP'2024-03-01 00:00:00.000001' + INTERVAL %d MICROSECOND, 't%d')", i, i/4, i))
		}
		my.Exec(t, ctx, "INSERT INTO ids VALUES "+strings.Join(ids, ", "), "INSERT INTO ties VALUES "+strings.Join(ties, ", "))
	}
	insert(1, 30)
	d := &streamDAG{dir: t.TempDir(), schema: pg.Schema, sinkURL: os.Getenv(postgrestest.Env)}
	d.path = filepath.Join(d.dir, "weir.yaml")
	writeFile(t, d.path, strings.NewReplacer("MYURL", my.URL(), "DB.", my.Database+".", "S.", pg.Schema+".").Replace(mysqlTableYAML))
	for _, task := range []string{"my_ids", "my_ties"} {
		runKilled(t, d.path, task, sourceCommitPhase)
		runKilled(t, d.path, task, "before-commit")
	}
	insert(31, 10)
	r, err := Load(d.path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, task := range []string{"my_ids", "my_ties"} {
		rep := once(t, r, task)
		t.Logf("%s: %d rows in, cursor %q → %q", task, rep.RowsIn, rep.Offsets[streamMark].From, rep.Offsets[streamMark].To)
	}
	var wantIDs, wantSeqs []string
	for i := 1; i <= 40; i++ {
		wantIDs = append(wantIDs, fmt.Sprint(uint64(18446744073709551615)-uint64(100-i)))
		wantSeqs = append(wantSeqs, fmt.Sprintf("%02d", i))
	}
	if got := sortedIDs(d.rows(t, "my_ids", "id")); !slices.Equal(got, wantIDs) {
		t.Errorf("ids %v, want %v once each", got, wantIDs)
	}
	seqs := d.rows(t, "my_ties", "seq")
	for i, s := range seqs {
		if len(s) == 1 {
			seqs[i] = "0" + s
		}
	}
	if got := sortedIDs(seqs); !slices.Equal(got, wantSeqs) {
		t.Errorf("ties: seqs %v, want 1..40 once each", got)
	}
	created := columnsByID(t, d.sinkURL, d.schema, "my_ids", "v")
	if created[wantIDs[39]] != "v40" {
		t.Errorf("the row with id 2^64-61 holds %q, want v40", created[wantIDs[39]])
	}
	times := d.rows(t, "my_ties", "created")
	slices.Sort(times)
	if len(times) != 40 || !strings.Contains(times[39], "00:00:00.000011") {
		t.Errorf("created %v, want microseconds kept (the last is 00:00:00.000011)", times)
	}
}

// TestStream_TableSIGTERM: a continuous table task in a child process
// exits 0 on SIGTERM, with every row it read committed once.
func TestStream_TableSIGTERM(t *testing.T) {
	d, fx := newTableDAG(t, "postgres")
	insertRows(t, fx, 1, 40)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperDagfile+"="+d.path, helperTask+"=tb_cont", helperSIGTERM+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitFor(t, time.Minute, func() bool { return tableHas(t, d, "tb_cont", 40) })
	insertRows(t, fx, 41, 5)
	waitFor(t, time.Minute, func() bool { return tableHas(t, d, "tb_cont", 45) })
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("still running 30 s after SIGTERM\n%s", stderr.String())
	}
	if got := sortedIDs(d.rows(t, "tb_cont", "id")); !slices.Equal(got, tableIDs(1, 45, false)) {
		t.Errorf("ids %v, want 1..45 once", got)
	}
}

// TestStream_TableClickHouse: a ClickHouse table source (a MergeTree whose
// key is not unique) backfills into Postgres in chunks, resumes after a
// kill past a sink commit and picks up new rows.
func TestStream_TableClickHouse(t *testing.T) {
	ch := clickhousetest.New(t)
	pg := postgrestest.New(t)
	ctx := testContext(t)
	ch.Exec(t, ctx, "CREATE TABLE "+ch.Ref("ev")+" (id UInt64, ts DateTime('UTC'), v String) ENGINE = MergeTree ORDER BY id")
	insert := func(first, n int) {
		var rows []string
		for i := first; i < first+n; i++ {
			rows = append(rows, fmt.Sprintf("(%d, toDateTime('2024-03-01 00:00:00', 'UTC') + %d, 'v%d')", uint64(18446744073709551615)-uint64(100-i), i/3, i))
		}
		ch.Exec(t, ctx, "INSERT INTO "+ch.Ref("ev")+" VALUES "+strings.Join(rows, ", "))
	}
	insert(1, 20)
	d := &streamDAG{dir: t.TempDir(), schema: pg.Schema, sinkURL: os.Getenv(postgrestest.Env)}
	d.path = filepath.Join(d.dir, "weir.yaml")
	writeFile(t, d.path, fmt.Sprintf(`version: 1
connections:
  ch: %s
  pg: ${WEIR_TEST_PG}
tasks:
  ch_ev:
    stream: {source: ch, table: %s, cursor: ts, chunk_size: 4, sink: pg:%s.ch_ev, materialization: merge, key: [id]}
`, ch.URL(), ch.Ref("ev"), pg.Schema))
	runKilled(t, d.path, "ch_ev", sourceCommitPhase)
	runKilled(t, d.path, "ch_ev", "before-commit")
	insert(21, 10)
	r, err := Load(d.path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rep := once(t, r, "ch_ev")
	t.Logf("ch_ev: %d rows in, cursor %q → %q", rep.RowsIn, rep.Offsets[streamMark].From, rep.Offsets[streamMark].To)
	var want []string
	for i := 1; i <= 30; i++ {
		want = append(want, fmt.Sprint(uint64(18446744073709551615)-uint64(100-i)))
	}
	if got := sortedIDs(d.rows(t, "ch_ev", "id")); !slices.Equal(got, want) {
		t.Errorf("ids %v, want %v once each", got, want)
	}
}

// TestGraceful: the commit context of a chunk outlives its run's context
// by the grace period, counted from the end of the run's context.
func TestGraceful(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	wctx, cancel := graceful(ctx, 100*time.Millisecond)
	defer cancel()
	time.Sleep(150 * time.Millisecond) // longer than the grace, before the signal
	if wctx.Err() != nil {
		t.Fatal("ended before the run's context did")
	}
	stop()
	if wctx.Err() != nil {
		t.Fatal("ended with the run's context, without grace")
	}
	select {
	case <-wctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("still alive 5 s after the run's context ended")
	}
}
