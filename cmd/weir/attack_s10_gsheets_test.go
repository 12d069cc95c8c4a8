package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gs "github.com/weirhq/weir/routes/gsheets/gsheetstest"
)

// captureStderr runs fn with os.Stderr sent to a file (slog's handler and
// the progress lines write there) and returns what was written.
func captureStderr(t *testing.T, fn func()) string {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = f
	fn()
	os.Stderr = old
	f.Close()
	b, _ := os.ReadFile(f.Name())
	return string(b)
}

// TestAttackS10_GSheetsBadInput: bad input from a Sheets tab exits 2
// naming the tab and the column, and the token is never printed, in the
// error, the report or a debug log.
func TestAttackS10_GSheetsBadInput(t *testing.T) {
	const secret = "ya29.S3CRET-T0KEN"
	s := gs.NewServer(t)
	s.Token = secret
	s.CreateSpreadsheet("book", false)
	rows := [][]gs.Cell{{gs.Text("id"), gs.Text("v")}}
	for i := 1; i <= 5; i++ {
		rows = append(rows, []gs.Cell{gs.Num(float64(i)), gs.Text("x")})
	}
	late := append(append([][]gs.Cell(nil), rows...), []gs.Cell{gs.Text("n/a"), gs.Text("y")})
	wide := append(append([][]gs.Cell(nil), rows...), []gs.Cell{gs.Num(9), gs.Text("y"), gs.Text("extra")})
	s.SetTab("book", "Late", late)
	s.SetTab("book", "Wide", wide)
	s.SetTab("book", "O'Brien", rows)
	faults := 0
	s.Fault = func(r *http.Request) (int, string, bool) {
		if strings.Contains(r.URL.Path, "Flaky") && faults < 2 {
			faults++
			return http.StatusTooManyRequests, `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"quota"}}`, true
		}
		return 0, "", false
	}
	s.SetTab("book", "Flaky", rows)
	base := "gsheets://book?endpoint=" + s.URL + "&token=" + secret
	for _, tc := range []struct {
		name, url, table string
		want             int
		mention          []string // in the error
	}{
		{"typed mismatch on a later page", base + "&typed=1&page_rows=2", "Late", ExitBadInput, []string{`"Late"`, `"id"`}},
		{"row wider than the header on a later page", base + "&page_rows=2", "Wide", ExitBadInput, []string{`"Wide"`}},
		{"wrong token", "gsheets://book?endpoint=" + s.URL + "&token=ya29.WR0NG-T0KEN", "Late", ExitBadInput, nil},
		{"tab with a quote", base, `"O'Brien"`, ExitOK, nil},
		{"rate limited, then served", base, "Flaky", ExitOK, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var code int
			var stdout, stderr string
			logs := captureStderr(t, func() {
				code, stdout, stderr = runCmdErr(t, "--log-level", "debug", "transfer", tc.url, "file://"+t.TempDir(), "--table", tc.table, "--json")
			})
			all := stdout + stderr + logs
			if code != tc.want {
				t.Errorf("exit %d, want %d:\n%s", code, tc.want, all)
			}
			for _, m := range tc.mention {
				if !strings.Contains(strings.ReplaceAll(stderr+stdout, `\"`, `"`), m) { // --json escapes quotes
					t.Errorf("the error does not name %s:\n%s", m, stderr+stdout)
				}
			}
			for _, tok := range []string{secret, "ya29.WR0NG-T0KEN", "S3CRET", "WR0NG"} {
				if strings.Contains(all, tok) {
					t.Errorf("the output shows the token %q:\n%s", tok, all)
				}
			}
		})
	}
}
