// Package gsheetstest is an in-process peer of the parts of the Google
// Sheets v4 API that gsheets:// reads, and the routes matrix's fixture on
// it.
package gsheetstest

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server speaks, as the API documents them: spreadsheets.get (the tabs'
// titles, sheet types and gridProperties.rowCount/columnCount),
// spreadsheets.values.get on an A1 range ('Tab'!A2:Z100) with
// majorDimension=ROWS, valueRenderOption FORMATTED_VALUE (the default) or
// UNFORMATTED_VALUE, and dateTimeRenderOption SERIAL_NUMBER (the default)
// or FORMATTED_STRING. Like the API it leaves out trailing blank cells of a
// row and trailing blank rows of a range, sends "" for a blank cell before
// a row's last value, refuses a range past the grid (400), an unknown tab
// (400) and spreadsheet (404). With Token set a request must carry it as a
// bearer token (else 401); a spreadsheet made with Denied answers 403.
// Fault may answer a request instead (a 429, a 5xx).
type Server struct {
	URL   string
	Token string

	// Fault, when set, may answer a request itself (ok true).
	Fault func(r *http.Request) (status int, body string, ok bool)

	mu     sync.Mutex
	books  map[string]*book
	ranges []string // the values.get ranges asked, in order
}

type book struct {
	denied bool
	tabs   []*tab
}

type tab struct {
	title string
	rows  [][]Cell // rows[0] is sheet row 1
	cols  int      // the grid's columns (at least the widest row)
	grid  int      // the grid's rows (at least len(rows))
}

// Cell is one cell: a text, number, boolean or date-time value.
type Cell struct {
	V    any    // string, float64, bool; nil: blank
	F    string // the formatted text, when it differs from V's
	date bool   // V is a date-time serial number, F its text
}

// Text, Num, Bool and DateTime make cells; Blank is an empty one.
func Text(s string) Cell             { return Cell{V: s} }
func Num(f float64) Cell             { return Cell{V: f} }
func Bool(b bool) Cell               { return Cell{V: b} }
func Formatted(v any, f string) Cell { return Cell{V: v, F: f} }

// Blank is an empty cell.
var Blank = Cell{}

// DateTime is a date-time cell formatted as layout (Go's), stored as the
// sheet does: days since 1899-12-30 as a number.
func DateTime(t time.Time, layout string) Cell {
	serial := float64(t.Sub(time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC))) / float64(24*time.Hour)
	return Cell{V: serial, F: t.Format(layout), date: true}
}

// NewServer starts the peer for the test.
func NewServer(t testing.TB) *Server {
	s := &Server{books: map[string]*book{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// CreateSpreadsheet makes an empty spreadsheet; denied ones answer 403.
func (s *Server) CreateSpreadsheet(id string, denied bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.books[id] = &book{denied: denied}
}

// SetTab creates or replaces a tab holding rows (row 1 first) in a grid
// of at least 1000 rows and 26 columns, as a new sheet has.
func (s *Server) SetTab(id, title string, rows [][]Cell) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.books[id]
	t := &tab{title: title, grid: 1000, cols: 26}
	for i, bt := range b.tabs {
		if bt.title == title {
			b.tabs = append(b.tabs[:i], b.tabs[i+1:]...)
			break
		}
	}
	b.tabs = append(b.tabs, t)
	t.add(rows)
}

// AppendRows adds rows after a tab's last row, growing its grid as the
// sheet's append does.
func (s *Server) AppendRows(id, title string, rows [][]Cell) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.books[id].tabs {
		if t.title == title {
			t.add(rows)
		}
	}
}

// SetGrid sets a tab's grid size (rows, columns) beyond its values.
func (s *Server) SetGrid(id, title string, rows, cols int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.books[id].tabs {
		if t.title == title {
			t.grid, t.cols = max(rows, len(t.rows)), cols
		}
	}
}

func (t *tab) add(rows [][]Cell) {
	t.rows = append(t.rows, rows...)
	for _, r := range rows {
		t.cols = max(t.cols, len(r))
	}
	t.grid = max(t.grid, len(t.rows))
}

// Ranges returns the values.get ranges asked so far.
func (s *Server) Ranges() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ranges...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if s.Fault != nil {
		if code, body, ok := s.Fault(r); ok {
			writeJSON(w, code, body)
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	auth := r.Header.Get("Authorization")
	if (s.Token != "" || auth != "") && auth != "Bearer "+s.Token {
		apiError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/v4/spreadsheets/"), "/")
	if !strings.HasPrefix(r.URL.Path, "/v4/spreadsheets/") || r.Method != http.MethodGet {
		apiError(w, http.StatusNotFound, "NOT_FOUND", "Requested entity was not found.")
		return
	}
	id, _ := url.PathUnescape(parts[0])
	b, ok := s.books[id]
	if !ok {
		apiError(w, http.StatusNotFound, "NOT_FOUND", "Requested entity was not found.")
		return
	}
	if b.denied {
		apiError(w, http.StatusForbidden, "PERMISSION_DENIED", "The caller does not have permission")
		return
	}
	switch {
	case len(parts) == 1:
		s.serveSpreadsheet(w, id, b)
	case len(parts) == 3 && parts[1] == "values":
		rng, _ := url.PathUnescape(parts[2])
		s.serveValues(w, r, b, rng)
	default:
		apiError(w, http.StatusNotFound, "NOT_FOUND", "Requested entity was not found.")
	}
}

func (s *Server) serveSpreadsheet(w http.ResponseWriter, id string, b *book) {
	type grid struct {
		RowCount    int `json:"rowCount"`
		ColumnCount int `json:"columnCount"`
	}
	type props struct {
		Title          string `json:"title"`
		SheetType      string `json:"sheetType"`
		GridProperties grid   `json:"gridProperties"`
	}
	type sheet struct {
		Properties props `json:"properties"`
	}
	out := struct {
		ID     string  `json:"spreadsheetId"`
		Sheets []sheet `json:"sheets"`
	}{ID: id}
	for _, t := range b.tabs {
		out.Sheets = append(out.Sheets, sheet{props{t.title, "GRID", grid{t.grid, t.cols}}})
	}
	body, _ := json.Marshal(out)
	writeJSON(w, http.StatusOK, string(body))
}

// a1Range is 'Title'!A2:Z100 (or Title!A2:Z100).
var a1Range = regexp.MustCompile(`^(?:'((?:[^']|'')+)'|([^'!]+))!([A-Z]+)([0-9]+):([A-Z]+)([0-9]+)$`)

func (s *Server) serveValues(w http.ResponseWriter, r *http.Request, b *book, rng string) {
	s.ranges = append(s.ranges, rng)
	m := a1Range.FindStringSubmatch(rng)
	if m == nil {
		apiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Unable to parse range: "+rng)
		return
	}
	title := strings.ReplaceAll(m[1], "''", "'") + m[2]
	var t *tab
	for _, bt := range b.tabs {
		if bt.title == title {
			t = bt
		}
	}
	if t == nil {
		apiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Unable to parse range: "+rng)
		return
	}
	c1, r1, c2, r2 := colNumber(m[3]), atoi(m[4]), colNumber(m[5]), atoi(m[6])
	if r2 > t.grid || c2 > t.cols {
		apiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf("Range (%s) exceeds grid limits. Max rows: %d, max columns: %d", rng, t.grid, t.cols))
		return
	}
	q := r.URL.Query()
	unformatted := q.Get("valueRenderOption") == "UNFORMATTED_VALUE"
	dateText := q.Get("dateTimeRenderOption") == "FORMATTED_STRING"
	var values [][]any
	for row := r1; row <= r2 && row <= len(t.rows); row++ {
		cells := t.rows[row-1]
		var out []any
		for c := c1; c <= c2 && c <= len(cells); c++ {
			out = append(out, render(cells[c-1], unformatted, dateText))
		}
		for len(out) > 0 && out[len(out)-1] == "" {
			out = out[:len(out)-1] // trailing blank cells are left out
		}
		if out == nil {
			out = []any{}
		}
		values = append(values, out)
	}
	for len(values) > 0 && len(values[len(values)-1]) == 0 {
		values = values[:len(values)-1] // trailing blank rows too
	}
	resp := map[string]any{"range": rng, "majorDimension": "ROWS"}
	if len(values) > 0 {
		resp["values"] = values
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	json.NewEncoder(w).Encode(resp) // streamed: a page is not copied again

}

// render is a cell as values.get sends it.
func render(c Cell, unformatted, dateText bool) any {
	if c.V == nil {
		return ""
	}
	if !unformatted || c.date && dateText {
		if c.F != "" {
			return c.F
		}
		switch v := c.V.(type) {
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		case bool:
			return strings.ToUpper(strconv.FormatBool(v))
		}
	}
	if f, ok := c.V.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return "#NUM!"
	}
	return c.V
}

func colNumber(letters string) int {
	n := 0
	for _, c := range letters {
		n = n*26 + int(c-'A'+1)
	}
	return n
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func apiError(w http.ResponseWriter, code int, status, msg string) {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
	writeJSON(w, code, string(body))
}

func writeJSON(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	w.Write([]byte(body))
}
