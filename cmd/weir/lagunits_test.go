package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/weirhq/weir/runner"
)

// statusJSON runs weir status --json and decodes it.
func statusJSON(t *testing.T, path string) map[string]runner.TaskStatus {
	t.Helper()
	code, out := runCmd(t, "status", "-f", path, "--json")
	if code != ExitOK {
		t.Fatalf("status exited %d: %s", code, out)
	}
	var sts []runner.TaskStatus
	if err := json.Unmarshal([]byte(out), &sts); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	by := map[string]runner.TaskStatus{}
	for _, st := range sts {
		by[st.Task] = st
	}
	return by
}

// TestStatusCmd_LagUnits: every lag says its unit in weir status's JSON
// and text. A CSV file's integer cursor cannot count rows: after ids 1..10
// then 1000..1004 it is 994 behind in key distance (not 994 rows); the
// model over the lake counts rows (5). Neither total adds the other's unit.
func TestStatusCmd_LagUnits(t *testing.T) {
	path := writeLake(t)
	csv := filepath.Join(filepath.Dir(path), "data", "t.csv")
	body := "id,name\n"
	for _, id := range []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"} {
		body += id + ",x\n"
	}
	os.WriteFile(csv, []byte(body), 0o644)
	for _, task := range []string{"bronze", "silver"} {
		if code, _ := runCmd(t, "once", "--task", task, "-f", path); code != ExitOK {
			t.Fatalf("once %s exited %d", task, code)
		}
	}
	body += "1000,y\n1001,y\n1002,y\n1003,y\n1004,y\n"
	os.WriteFile(csv, []byte(body), 0o644)

	st := statusJSON(t, path)["bronze"]
	if l := st.Sources[0].Lag; l.Behind != 994 || l.Unit != "key distance" || st.Lag != 994 || st.LagUnit != "key distance" {
		t.Errorf("bronze over a CSV file: source lag %+v, task %d %q %v; want 994 key distance", l, st.Lag, st.LagUnit, st.Lags)
	}
	if code, out := runCmd(t, "status", "-f", path); code != ExitOK || !regexp.MustCompile(`(?m)^bronze .* 994 key distance$`).MatchString(out) {
		t.Errorf("status text does not label bronze's unit (exit %d):\n%s", code, out)
	}

	code, out := runCmd(t, "once", "--task", "bronze", "-f", path, "--json")
	var rep runner.Report
	if json.Unmarshal([]byte(out), &rep); code != ExitOK || rep.Lag != 0 || rep.LagUnit != "rows" {
		t.Fatalf("once bronze exited %d, lag %d %q; want 0 rows (a transfer reads up to the head it polled)", code, rep.Lag, rep.LagUnit)
	}
	st = statusJSON(t, path)["silver"]
	if l := st.Sources[0].Lag; l.Behind != 5 || l.Unit != "rows" || st.Lag != 5 || st.LagUnit != "rows" || len(st.Lags) != 1 {
		t.Errorf("silver over the lake: source lag %+v, task %d %q %v; want 5 rows", l, st.Lag, st.LagUnit, st.Lags)
	}
	if code, out := runCmd(t, "status", "-f", path); code != ExitOK || !regexp.MustCompile(`(?m)^silver .* 5 rows$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^bronze .* 0 key distance$`).MatchString(out) {
		t.Errorf("status text after bronze ran (exit %d):\n%s", code, out)
	}
}
