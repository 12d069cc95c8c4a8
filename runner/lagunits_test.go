package runner

import (
	"maps"
	"testing"

	"github.com/weirhq/weir/incremental"
)

// statusOf returns one task's status.
func statusOf(t *testing.T, r *Runner, task string) TaskStatus {
	t.Helper()
	for _, st := range r.Status(testContext(t), mustSelect(t, r)) {
		if st.Task == task {
			if st.Error != "" {
				t.Fatalf("status of %s: %s", task, st.Error)
			}
			return st
		}
	}
	t.Fatalf("no status for %s", task)
	return TaskStatus{}
}

// TestStatus_LagInRowsPostgres: a PostgreSQL cursor's lag is the rows past
// the offset (count(*)), not the distance between key values: after ids
// 1..10, ids 1000..1004 are 5 rows behind, not 994 — for the model over
// bronze (in weir status and in the run report) and for the transfer
// into it; the totals name their unit.
func TestStatus_LagInRowsPostgres(t *testing.T) {
	d := newPGDAG(t, medallionYAML)
	r := d.runner(t)
	d.insertOrders(t, 1, 10)
	once(t, r, "bronze_orders")
	once(t, r, "silver_log")
	d.insertOrders(t, 1000, 5)
	for _, round := range []struct {
		task string
		want int64
	}{{"bronze_orders", 5}, {"silver_log", 0}} {
		st := statusOf(t, r, round.task)
		if l := st.Sources[0].Lag; l.Behind != round.want || l.Unit != incremental.UnitRows || st.Lag != round.want || st.LagUnit != incremental.UnitRows {
			t.Fatalf("%s before bronze runs: source lag %+v, task lag %d %s; want %d rows", round.task, l, st.Lag, st.LagUnit, round.want)
		}
	}
	once(t, r, "bronze_orders")
	st := statusOf(t, r, "silver_log")
	if l := st.Sources[0].Lag; l.Behind != 5 || l.Unit != incremental.UnitRows || l.Position != "10" || l.Head != "1004" {
		t.Fatalf("silver_log after bronze: %+v, want 5 rows from 10 to 1004", l)
	}
	if st.Lag != 5 || st.LagUnit != "rows" || !maps.Equal(st.Lags, map[string]int64{"rows": 5}) {
		t.Fatalf("silver_log totals: %d %s %v", st.Lag, st.LagUnit, st.Lags)
	}
	if rep := once(t, r, "silver_log"); rep.RowsIn != 5 || rep.Lag != 0 || rep.LagUnit != "rows" {
		t.Fatalf("silver_log run: %+v", rep)
	}
}

// TestStatus_LagInRowsIceberg: an Iceberg source's lag is the rows its
// snapshots after the offset added (their summaries' added-records), not
// the number of snapshots.
func TestStatus_LagInRowsIceberg(t *testing.T) {
	d := newLakeDAG(t, "warn")
	r := d.runner(t)
	d.orders(t, 1, 10)
	once(t, r, "bronze_orders")
	once(t, r, "silver_log")
	for _, last := range []int{25, 26, 40} { // three snapshots: 15, 1, 14 rows
		d.orders(t, 1, last)
		once(t, r, "bronze_orders")
	}
	st := statusOf(t, r, "silver_log")
	if l := st.Sources[0].Lag; l.Behind != 30 || l.Unit != incremental.UnitRows {
		t.Fatalf("silver_log behind three snapshots of 30 rows: %+v", l)
	}
	if st.Lag != 30 || st.LagUnit != "rows" {
		t.Fatalf("silver_log totals: %d %s %v", st.Lag, st.LagUnit, st.Lags)
	}
	once(t, r, "silver_log")
	if st := statusOf(t, r, "silver_log"); st.Lag != 0 || st.Sources[0].Lag.Unit != "rows" {
		t.Fatalf("silver_log caught up: %+v", st)
	}
}

// TestSumLags: a total never adds different units: counts (rows, bytes,
// events) sum, distances (key distance, seconds, snapshots) give the
// largest; several units give per-unit figures and -1 ("mixed") unless
// every lag is 0.
func TestSumLags(t *testing.T) {
	lag := func(n int64, unit string) incremental.Lag { return incremental.Lag{Behind: n, Unit: unit, Known: true} }
	for _, c := range []struct {
		name  string
		lags  []incremental.Lag
		total int64
		unit  string
		per   map[string]int64
	}{
		{"none", nil, 0, "", nil},
		{"one unit", []incremental.Lag{lag(3, "rows"), lag(4, "rows")}, 7, "rows", map[string]int64{"rows": 7}},
		{"rows and seconds", []incremental.Lag{lag(3, "rows"), lag(60, "seconds")}, -1, "mixed", map[string]int64{"rows": 3, "seconds": 60}},
		{"mixed, all caught up", []incremental.Lag{lag(0, "rows"), lag(0, "key distance")}, 0, "", map[string]int64{"rows": 0, "key distance": 0}},
		{"mixed, one behind", []incremental.Lag{lag(0, "rows"), lag(2, "key distance"), lag(5, "rows")}, -1, "mixed", map[string]int64{"rows": 5, "key distance": 2}},
		// A distance in one table's keys (or seconds, or snapshots) does not
		// add to another table's: the furthest behind, never a sum.
		{"two key distances", []incremental.Lag{lag(994, "key distance"), lag(6, "key distance")}, 994, "key distance", map[string]int64{"key distance": 994}},
		{"two time cursors", []incremental.Lag{lag(60, "seconds"), lag(90, "seconds")}, 90, "seconds", map[string]int64{"seconds": 90}},
		{"two snapshot cursors", []incremental.Lag{lag(2, "snapshots"), lag(3, "snapshots")}, 3, "snapshots", map[string]int64{"snapshots": 3}},
		{"rows add up, a distance beside them does not", []incremental.Lag{lag(5, "rows"), lag(7, "rows"), lag(30, "seconds"), lag(10, "seconds")}, -1, "mixed", map[string]int64{"rows": 12, "seconds": 30}},
		{"no unit (a lookup, a missing table)", []incremental.Lag{{}, lag(9, "events")}, 9, "events", map[string]int64{"events": 9}},
	} {
		total, unit, per := sumLags(c.lags)
		if total != c.total || unit != c.unit || !maps.Equal(per, c.per) {
			t.Errorf("%s: %d %q %v, want %d %q %v", c.name, total, unit, per, c.total, c.unit, c.per)
		}
	}
}
