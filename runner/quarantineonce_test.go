package runner

import (
	"errors"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/stream/streamtest"
)

// errCrash stands for a crash at a checkpoint (routes.SetCheckpointHook).
var errCrash = errors.New("crash injected at before-commit")

// TestStream_QuarantineOnceReplayed: a run that dies between the
// quarantine's commit and the sink's (into Iceberg they are two commits),
// then a run that reads that batch again in smaller batches and dies
// midway, then a run to the end: each bad event is quarantined exactly
// once and each good one is in the sink exactly once, for every source
// that replays from the sink's cursor, into Iceberg and PostgreSQL.
// Serial: the checkpoint hook is the process's.
func TestStream_QuarantineOnceReplayed(t *testing.T) {
	const n = 60
	for _, pc := range streamPeers {
		if !pc.seekable {
			continue
		}
		for _, sink := range streamSinks {
			t.Run(pc.name+"/"+sink, func(t *testing.T) {
				p := pc.new(t)
				d := newStreamDAG(t, p, sink)
				p.Publish(t, n)
				// Batches of 10: the first batch's bad event (5) is
				// quarantined, its sink commit fails.
				crashAt(t, d, 10, 1)
				// Batches of 3 read that batch again: two commit, the
				// third dies (the replay is not over: 7..10 are next).
				crashAt(t, d, 3, 3)
				setBatchSize(t, d, 10)
				r, err := Load(d.path, Options{Log: testLog{t}})
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				drain(t, r, d, "ev_append", n)
				payloads := d.rows(t, "ev_append"+QuarantineSuffix, "_weir_payload")
				slices.Sort(payloads)
				var want []string
				for k := 1; k <= n; k++ {
					if pl, bad := streamtest.BadPayload(k); bad {
						want = append(want, pl)
					}
				}
				slices.Sort(want)
				if !slices.Equal(payloads, want) {
					t.Errorf("quarantine after two crashes before the sink's commit: %q, want each of %q once", payloads, want)
				}
				if got := d.ids(t, "ev_append"); !slices.Equal(got, wantIDs(n)) {
					t.Errorf("sink ids %v, want each of %v once", got, wantIDs(n))
				}
			})
		}
	}
}

// crashAt runs ev_append with batches of size and fails its nth
// before-commit checkpoint (the sink's commit, after the quarantine's).
func crashAt(t *testing.T, d *streamDAG, size, nth int) {
	t.Helper()
	setBatchSize(t, d, size)
	r, err := Load(d.path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seen := 0
	restore := routes.SetCheckpointHook(func(phase string) error {
		if phase == "before-commit" {
			if seen++; seen == nth {
				return errCrash
			}
		}
		return nil
	})
	defer restore()
	if _, err := r.Once(testContext(t), "ev_append"); !errors.Is(err, errCrash) {
		t.Fatalf("run with a crash at before-commit #%d: %v, want the crash", nth, err)
	}
}

var appendBatch = regexp.MustCompile(`(sink: [^,]*\.ev_append, batch_size: )\d+`)

// setBatchSize sets ev_append's batch_size in d's dagfile.
func setBatchSize(t *testing.T, d *streamDAG, size int) {
	t.Helper()
	b, err := os.ReadFile(d.path)
	if err != nil {
		t.Fatal(err)
	}
	out := appendBatch.ReplaceAll(b, []byte("${1}"+strconv.Itoa(size)))
	if slices.Equal(out, b) && size != 10 {
		t.Fatalf("no batch_size of ev_append in %s", b)
	}
	writeFile(t, d.path, string(out))
}

// TestRunner_QuarantineOnceLake: a model's quarantine into Iceberg is its
// own commit, before the sink's; a run that fails between the two, then a
// run again, leaves the quarantine and the sink as one clean run does (the
// next run reads the same batch and does not quarantine it again).
// Serial: the checkpoint hook is the process's.
func TestRunner_QuarantineOnceLake(t *testing.T) {
	crashed, clean := newLakeDAG(t, "warn"), newLakeDAG(t, "warn")
	rk, rc := crashed.runner(t), clean.runner(t)
	for _, last := range []int{100, 200} {
		crashed.orders(t, 1, last)
		clean.orders(t, 1, last)
		once(t, rk, "bronze_orders")
		once(t, rc, "bronze_orders")
		restore := routes.SetCheckpointHook(func(phase string) error {
			if phase == "before-commit" {
				return errCrash
			}
			return nil
		})
		_, err := rk.Once(testContext(t), "silver_orders")
		restore()
		if !errors.Is(err, errCrash) {
			t.Fatalf("silver_orders with a crash before the sink's commit: %v", err)
		}
		once(t, rk, "silver_orders")
		once(t, rc, "silver_orders")
	}
	for _, table := range []string{"silver.orders__quarantine", "silver.orders"} {
		if a, b := lakeCount(t, rk, table), lakeCount(t, rc, table); a != b || b == 0 {
			t.Errorf("%s: %d rows after a crash between the commits, %d after clean runs", table, a, b)
		}
	}
}

// TestContract_RuleMissingColumnNamed: a contract rule that reads a
// column the model's rows lack fails the run as bad input naming the
// rule, where it is written and the columns there are — not with DuckDB's
// binder error over weir's generated check SQL alone.
func TestContract_RuleMissingColumnNamed(t *testing.T) {
	d := newLakeDAG(t, "warn")
	b, err := os.ReadFile(d.path)
	if err != nil {
		t.Fatal(err)
	}
	const rule = "        - accepted_values: {column: status, values: [paid, refunded, pending]}\n"
	body := strings.Replace(string(b), rule, rule+"        - sql: \"nosuch > 0\"\n", 1)
	writeFile(t, d.path, body)
	r := d.runner(t)
	d.orders(t, 1, 20)
	once(t, r, "bronze_orders")
	_, err = r.Once(testContext(t), "silver_orders")
	if !errors.Is(err, routes.ErrBadInput) {
		t.Fatalf("a rule over a missing column: %v, want bad input", err)
	}
	for _, want := range []string{`rule sql: nosuch > 0 (the dagfile:`, `reads column "nosuch"`, "they have id, customer_id, amount, status"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
