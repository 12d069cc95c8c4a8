package runner

import (
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/weirhq/weir/routes"
)

// syncBuf is a log that tests read.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fullRefreshSink is one sink under test: how to load orders, read a
// sink table's rows and its commit count.
type fullRefreshSink struct {
	name   string
	path   string
	orders func(t *testing.T, last int)
	rows   func(t *testing.T, r *Runner, table string) []string
	// commits: the sink's commits so far (Iceberg: the snapshot sequence
	// number), or nil where there is no such count
	commits func(t *testing.T, r *Runner, table string) string
	before  func(t *testing.T) // after the first run (a view on the sink)
}

// TestReset_FullRefresh: reset --to earliest --full-refresh empties a
// model's sink in the commit that moves its offsets to earliest, so the
// next run rebuilds it — an append sink holds each row once, an upsert
// sink keeps its key (the next upsert merges) and its quarantine is not
// doubled. On Iceberg the reset is exactly one snapshot; on PostgreSQL a
// view on the sink does not stop it. A reset killed inside its commit
// leaves the rows and the offsets as they were. Without --full-refresh,
// --to earliest on an append sink warns that the replay duplicates.
func TestReset_FullRefresh(t *testing.T) {
	for _, s := range []fullRefreshSink{lakeSink(t), pgSink(t)} {
		t.Run(s.name, func(t *testing.T) {
			log := &syncBuf{}
			r, err := Load(s.path, Options{Log: io.MultiWriter(testLog{t}, log)})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			s.orders(t, 30)
			once(t, r, "bronze_orders")
			tasks := []string{"silver_log", "silver_orders"}
			want := map[string][]string{}
			for _, task := range append(tasks, "silver_orders__quarantine") {
				if task != "silver_orders__quarantine" {
					once(t, r, task)
				}
			}
			for _, table := range append(tasks, "silver_orders__quarantine") {
				want[table] = s.rows(t, r, table)
			}
			if len(want["silver_log"]) != 30 || len(want["silver_orders__quarantine"]) == 0 {
				t.Fatalf("first run: %d rows in silver_log, %d quarantined", len(want["silver_log"]), len(want["silver_orders__quarantine"]))
			}
			if s.before != nil {
				s.before(t)
			}
			for _, task := range tasks {
				// Killed inside its commit: nothing moved.
				runKilledEnv(t, s.path, task, "commit", helperReset+"=1")
				if got := s.rows(t, r, task); !slices.Equal(got, want[task]) {
					t.Fatalf("%s after a reset killed in its commit: %d rows, want %d", task, len(got), len(want[task]))
				}
				if rep := once(t, r, task); !rep.NothingNew {
					t.Fatalf("%s after a reset killed in its commit: the offsets moved: %+v", task, rep)
				}
				var seq string
				if s.commits != nil {
					seq = s.commits(t, r, task)
				}
				rep, err := r.ResetWith(testContext(t), task, "earliest", ResetOptions{FullRefresh: true})
				if err != nil {
					t.Fatal(err)
				}
				if off := rep.Offsets["input"]; off.To != "" || rep.Lag != 30 {
					t.Fatalf("reset %s: %+v", task, rep)
				}
				if got := s.rows(t, r, task); len(got) != 0 {
					t.Fatalf("%s after reset --full-refresh: %d rows, want none", task, len(got))
				}
				if s.commits != nil {
					if after := s.commits(t, r, task); after != next(seq) {
						t.Fatalf("%s: the reset took the sink from commit %s to %s, want one commit", task, seq, after)
					}
				}
				if rep := once(t, r, task); rep.RowsIn != 30 {
					t.Fatalf("rebuild of %s read %d rows, want 30", task, rep.RowsIn)
				}
			}
			for table, rows := range want {
				// (a quarantine row carries its run's id: compared by count)
				if got := s.rows(t, r, table); !slices.Equal(got, rows) && !(strings.HasSuffix(table, QuarantineSuffix) && len(got) == len(rows)) {
					t.Errorf("%s after --full-refresh and a run: %d rows, want the %d of the first run", table, len(got), len(rows))
				}
			}
			// Without --full-refresh: an append sink is warned about.
			if _, err := r.Reset(testContext(t), "silver_log", "earliest"); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(log.String(), "reset --to earliest on an append sink") || !strings.Contains(log.String(), "--full-refresh") {
				t.Errorf("no duplicate warning for reset --to earliest of an append sink:\n%s", log.String())
			}
			if got := s.rows(t, r, "silver_log"); len(got) != 30 {
				t.Errorf("a plain reset changed the sink: %d rows", len(got))
			}
			for _, bad := range []struct{ task, to string }{{"silver_log", "latest"}, {"silver_log", "5"}, {"bronze_orders", "earliest"}} {
				if _, err := r.ResetWith(testContext(t), bad.task, bad.to, ResetOptions{FullRefresh: true}); !errors.Is(err, routes.ErrBadInput) {
					t.Errorf("reset %s --to %s --full-refresh: %v, want bad input", bad.task, bad.to, err)
				}
			}
		})
	}
}

// runKilledEnv is runKilled with extra env for the child.
func runKilledEnv(t *testing.T, path, task, phase string, env ...string) {
	t.Helper()
	cmd := startPaused(t, path, task, phase, env...)
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	waitBackendsGone(t, cmd)
}

func lakeSink(t *testing.T) fullRefreshSink {
	d := newLakeDAG(t, "warn")
	return fullRefreshSink{name: "iceberg", path: d.path,
		orders: func(t *testing.T, last int) { d.orders(t, 1, last) },
		rows:   func(t *testing.T, r *Runner, table string) []string { return lakeRows(t, r, lakeName(table)) },
		commits: func(t *testing.T, r *Runner, table string) string {
			ctx := testContext(t)
			src, err := r.source(ctx, "lake")
			if err != nil {
				t.Fatal(err)
			}
			schema, name, _ := strings.Cut(lakeName(table), ".")
			info, err := src.Probe(ctx, routes.TableRef{Schema: schema, Name: name})
			if err != nil {
				t.Fatal(err)
			}
			cs, ok := routes.As[routes.CursorSource](src)
			if !ok {
				t.Fatal("the lake is not a CursorSource")
			}
			seq, _, err := cs.MaxCursor(ctx, info, routes.SnapshotCursor)
			if err != nil {
				t.Fatal(err)
			}
			return seq
		}}
}

func pgSink(t *testing.T) fullRefreshSink {
	d := newPGDAG(t, medallionYAML)
	return fullRefreshSink{name: "postgres", path: d.path,
		orders: func(t *testing.T, last int) { d.insertOrders(t, 1, last) },
		rows: func(t *testing.T, _ *Runner, table string) []string {
			rows, err := d.fx.Pool.Query(testContext(t), "SELECT (to_jsonb(t) - '_weir_run')::text FROM "+d.s+"."+table+" t")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var out []string
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					t.Fatal(err)
				}
				out = append(out, s)
			}
			slices.Sort(out)
			return out
		},
		before: func(t *testing.T) {
			// A view on the sinks: the emptied table cannot be swapped in,
			// it is truncated in the same transaction instead.
			d.fx.Exec(t, testContext(t), "CREATE VIEW "+d.s+".v_log AS SELECT * FROM "+d.s+".silver_log",
				"CREATE VIEW "+d.s+".v_orders AS SELECT * FROM "+d.s+".silver_orders")
		}}
}

// next is the sequence number after seq.
func next(seq string) string {
	n, _ := strconv.ParseInt(seq, 10, 64)
	return strconv.FormatInt(n+1, 10)
}

// lakeName is the lake DAG's name of a medallion table: silver_log is silver.log.
func lakeName(table string) string { return strings.Replace(table, "silver_", "silver.", 1) }
