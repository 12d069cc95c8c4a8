package gsheets_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/gsheets"
	gs "github.com/weirhq/weir/routes/gsheets/gsheetstest"
	_ "github.com/weirhq/weir/routes/objstore"
	"github.com/weirhq/weir/routes/routestest"
)

const book = "1BookID_abc-123"

func testContext(t *testing.T) context.Context { return routestest.Context(t, 2*time.Minute) }

func peer(t *testing.T) *gs.Server {
	s := gs.NewServer(t)
	s.CreateSpreadsheet(book, false)
	return s
}

func sheetURL(s *gs.Server, query string) string {
	u := "gsheets://" + book + "?endpoint=" + s.URL
	if query != "" {
		u += "&" + query
	}
	return u
}

func texts(vals ...string) []gs.Cell {
	out := make([]gs.Cell, len(vals))
	for i, v := range vals {
		out[i] = gs.Text(v)
	}
	return out
}

// numbered is a tab of n rows: id (a number), name (text), score (a fraction).
func numbered(n int) [][]gs.Cell {
	rows := [][]gs.Cell{texts("id", "name", "score")}
	for i := 1; i <= n; i++ {
		rows = append(rows, []gs.Cell{gs.Num(float64(i)), gs.Text(fmt.Sprintf("row %d", i)), gs.Num(float64(i) + 0.5)})
	}
	return rows
}

// read reads a tab through the source: the schema as "name type", and
// each row's values as text (NULL for a null).
func read(t *testing.T, ctx context.Context, url, tab string) (string, []string, error) {
	t.Helper()
	src, err := routes.OpenSource(ctx, url)
	if err != nil {
		return "", nil, err
	}
	defer src.Close()
	info, err := src.Probe(ctx, routes.TableRef{Name: tab})
	if err != nil {
		return "", nil, err
	}
	var cols []string
	for _, c := range info.Columns {
		cols = append(cols, c.Name+" "+c.Type.String())
	}
	ranges, err := src.Plan(ctx, info, routes.PlanOptions{Pipes: 4})
	if err != nil {
		return "", nil, err
	}
	var rows []string
	for _, r := range ranges {
		s, err := src.Read(ctx, r, routes.ReadOptions{ChunkBytes: 256})
		if err != nil {
			return "", nil, err
		}
		for s.Next() {
			rec := s.RecordBatch()
			for i := range int(rec.NumRows()) {
				var vals []string
				for _, c := range rec.Columns() {
					if c.IsNull(i) {
						vals = append(vals, "NULL")
					} else {
						vals = append(vals, c.ValueStr(i))
					}
				}
				rows = append(rows, strings.Join(vals, ","))
			}
		}
		err = s.Err()
		s.Release()
		if err != nil {
			return "", nil, err
		}
	}
	return strings.Join(cols, ", "), rows, nil
}

// A tab is read a page of rows per values.get, up to the grid's last row,
// with A1 ranges as wide as the grid.
func TestGSheets_PagedRead(t *testing.T) {
	ctx := testContext(t)
	s := peer(t)
	s.SetTab(book, "Sheet 1", numbered(95))
	s.SetGrid(book, "Sheet 1", 100, 5)
	schema, rows, err := read(t, ctx, sheetURL(s, "page_rows=20"), "Sheet 1")
	if err != nil {
		t.Fatal(err)
	}
	if schema != "id utf8, name utf8, score utf8" {
		t.Fatalf("schema %s: every column is text by default", schema)
	}
	if len(rows) != 95 || rows[0] != "1,row 1,1.5" || rows[94] != "95,row 95,95.5" {
		t.Fatalf("%d rows: first %q, last %q", len(rows), rows[0], rows[len(rows)-1])
	}
	want := []string{"'Sheet 1'!A1:E1", "'Sheet 1'!A2:E21", // probe: header, first page
		"'Sheet 1'!A2:E21", "'Sheet 1'!A22:E41", "'Sheet 1'!A42:E61", "'Sheet 1'!A62:E81", "'Sheet 1'!A82:E100"}
	if got := s.Ranges(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("ranges read:\n got %v\nwant %v", got, want)
	}
}

// Values are the cells' formatted text by default; the header's names are
// made unique and blanks named; short rows are padded with NULL, blank
// rows are skipped, and header_row= picks the header.
func TestGSheets_TextAndHeader(t *testing.T) {
	ctx := testContext(t)
	s := peer(t)
	s.SetTab(book, "T", [][]gs.Cell{
		texts("a title above the table"),
		{gs.Text("id"), gs.Text("id"), gs.Blank, gs.Text("Share\nof total")},
		{gs.Num(1), gs.Formatted(1234.5, "$1,234.50"), gs.Text("x"), gs.Formatted(0.25, "25%")},
		{gs.Num(2)}, // short
		{},          // blank
		{gs.Blank, gs.Blank, gs.Text("")},
		{gs.Num(3), gs.Blank, gs.Text("z"), gs.Bool(true)},
	})
	schema, rows, err := read(t, ctx, sheetURL(s, "header_row=2"), "T")
	if err != nil {
		t.Fatal(err)
	}
	if schema != "id utf8, id_2 utf8, column_3 utf8, Share of total utf8" {
		t.Fatalf("schema %s", schema)
	}
	want := []string{"1,$1,234.50,x,25%", "2,NULL,NULL,NULL", "3,NULL,z,TRUE"}
	if strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Fatalf("rows\n got %q\nwant %q", rows, want)
	}
}

// typed=1 infers each column's type from the first page's cells, read
// unformatted (dates as their formatted text).
func TestGSheets_Typed(t *testing.T) {
	ctx := testContext(t)
	s := peer(t)
	ts := time.Date(2024, 3, 9, 14, 30, 5, 0, time.UTC)
	s.SetTab(book, "T", [][]gs.Cell{
		texts("n", "x", "ok", "day", "at", "code", "mixed", "empty"),
		{gs.Num(1), gs.Formatted(1.25, "$1.25"), gs.Bool(true), gs.DateTime(ts, time.DateOnly), gs.DateTime(ts, time.DateTime), gs.Text("007"), gs.Num(1)},
		{gs.Num(-2), gs.Num(3), gs.Bool(false), gs.Blank, gs.Blank, gs.Text("12.30"), gs.Text("a")},
	})
	schema, rows, err := read(t, ctx, sheetURL(s, "typed=1"), "T")
	if err != nil {
		t.Fatal(err)
	}
	if want := "n int64, x float64, ok bool, day date32, at timestamp[us], code utf8, mixed utf8, empty utf8"; schema != want {
		t.Fatalf("schema\n got %s\nwant %s", schema, want)
	}
	want := []string{"1,1.25,true,2024-03-09,2024-03-09T14:30:05,007,1,NULL", "-2,3,false,NULL,NULL,12.30,a,NULL"}
	if strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Fatalf("rows\n got %q\nwant %q", rows, want)
	}
}

// fileDest is a file:// destination holding table t from a good run.
func fileDest(t *testing.T, ctx context.Context, s *gs.Server, tab string) string {
	t.Helper()
	dst := "file://" + t.TempDir()
	if _, err := weir.Transfer(ctx, sheetURL(s, "typed=1&page_rows=10"), dst, weir.TransferOptions{Tables: []string{tab}}); err != nil {
		t.Fatalf("first transfer: %v", err)
	}
	return dst
}

func rowsAt(t *testing.T, ctx context.Context, dst, table string) int {
	t.Helper()
	_, rows, err := read(t, ctx, dst, table)
	if err != nil {
		t.Fatalf("read the destination: %v", err)
	}
	return len(rows)
}

// A cell that contradicts the type typed=1 inferred from the first page
// fails the read naming tab, row and column, as bad input; the
// destination keeps its table.
func TestGSheets_TypedContradictionFailsBeforeCommit(t *testing.T) {
	ctx := testContext(t)
	s := peer(t)
	s.SetTab(book, "T", numbered(30))
	dst := fileDest(t, ctx, s, "T")
	s.AppendRows(book, "T", [][]gs.Cell{{gs.Text("n/a"), gs.Text("late"), gs.Num(1)}})
	_, err := weir.Transfer(ctx, sheetURL(s, "typed=1&page_rows=10"), dst, weir.TransferOptions{Tables: []string{"T"}})
	want := `gsheets tab "T" row 32, column "id": "n/a" is not a whole number (typed=1 inferred int64 from the first page of rows, page_rows=10)`
	if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want bad input %q", err, want)
	}
	if n := rowsAt(t, ctx, dst, "T"); n != 30 {
		t.Fatalf("the destination holds %d rows, want the first run's 30", n)
	}
}

// A row wider than the header fails naming the tab and the row: at probe
// when it is in the rows the probe reads, else during the read, before
// the commit.
func TestGSheets_WideRow(t *testing.T) {
	ctx := testContext(t)
	s := peer(t)
	rows := numbered(3)
	rows[2] = append(rows[2], gs.Blank, gs.Text("stray"))
	s.SetTab(book, "Probe", rows)
	src, err := routes.OpenSource(ctx, sheetURL(s, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	_, err = src.Probe(ctx, routes.TableRef{Name: "Probe"})
	if want := `gsheets tab "Probe" row 3 has a value in column E, past the header's last column C ("score")`; !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), want) {
		t.Fatalf("probe: got %v, want bad input %q", err, want)
	}

	s.SetTab(book, "Late", numbered(30))
	dst := fileDest(t, ctx, s, "Late")
	s.AppendRows(book, "Late", [][]gs.Cell{{gs.Num(31), gs.Text("x"), gs.Num(1), gs.Text("stray")}})
	_, err = weir.Transfer(ctx, sheetURL(s, "typed=1&page_rows=10"), dst, weir.TransferOptions{Tables: []string{"Late"}})
	if want := `gsheets tab "Late" row 32 has a value in column D`; !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), want) {
		t.Fatalf("read: got %v, want bad input %q", err, want)
	}
	if n := rowsAt(t, ctx, dst, "Late"); n != 30 {
		t.Fatalf("the destination holds %d rows, want the first run's 30", n)
	}
}

// logTo captures slog's default logger for the test.
func logTo(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&safeWriter{w: &buf}, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

type safeWriter struct {
	mu atomic.Bool
	w  *bytes.Buffer
}

func (s *safeWriter) Write(p []byte) (int, error) {
	for !s.mu.CompareAndSwap(false, true) {
	}
	defer s.mu.Store(false)
	return s.w.Write(p)
}

// 429 (RESOURCE_EXHAUSTED) and 5xx answers are retried with backoff, each
// wait logged; a limit that never lifts fails after a bounded number of
// tries, and a cancel ends a wait at once.
func TestGSheets_Retry(t *testing.T) {
	gsheets.SetBackoff(t, time.Millisecond)
	ctx := testContext(t)
	s := peer(t)
	s.SetTab(book, "T", numbered(25))
	var calls, failing atomic.Int64
	s.Fault = func(r *http.Request) (int, string, bool) {
		n := calls.Add(1)
		switch {
		case failing.Load() < 0: // always
			return http.StatusTooManyRequests, `{"error":{"code":429,"message":"Quota exceeded for quota metric 'Read requests'","status":"RESOURCE_EXHAUSTED"}}`, true
		case n%3 == 1:
			return http.StatusTooManyRequests, `{"error":{"code":429,"message":"Quota exceeded for quota metric 'Read requests'","status":"RESOURCE_EXHAUSTED"}}`, true
		case n%3 == 2:
			return http.StatusServiceUnavailable, `{"error":{"code":503,"message":"The service is currently unavailable.","status":"UNAVAILABLE"}}`, true
		}
		return 0, "", false
	}
	logs := logTo(t)
	_, rows, err := read(t, ctx, sheetURL(s, "page_rows=10"), "T")
	if err != nil || len(rows) != 25 {
		t.Fatalf("read %d rows through 429s and 503s: %v", len(rows), err)
	}
	if l := logs.String(); !strings.Contains(l, "gsheets: waiting before retrying") || !strings.Contains(l, "rate limited (429)") || !strings.Contains(l, "failing (503)") {
		t.Fatalf("the waits are not logged:\n%s", l)
	}

	failing.Store(-1)
	_, _, err = read(t, ctx, sheetURL(s, ""), "T")
	if err == nil || !strings.Contains(err.Error(), "still rate limited (429) after 6 tries") {
		t.Fatalf("a limit that never lifts: %v", err)
	}

	gsheets.SetBackoff(t, time.Hour)
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err = read(t, cctx, sheetURL(s, ""), "T")
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Fatalf("a cancel during a wait: %v after %v", err, time.Since(start))
	}
}

// Bad input fails before a row moves, as exit 2 (routes.ErrBadInput),
// with a message that says what to do and shows no credential.
func TestGSheets_BadInput(t *testing.T) {
	ctx := testContext(t)
	s := peer(t)
	s.SetTab(book, "T", numbered(3))
	s.SetTab(book, "Empty", nil)
	s.CreateSpreadsheet("private", true)
	userKey := t.TempDir() + "/user.json"
	if err := os.WriteFile(userKey, []byte(`{"type":"authorized_user","client_id":"x","client_secret":"S3CRET-token","refresh_token":"r"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	locked := gs.NewServer(t)
	locked.Token = "good-token"
	locked.CreateSpreadsheet(book, false)
	tests := []struct {
		name, url, table, want string
	}{
		{"unknown spreadsheet", "gsheets://nope?endpoint=" + s.URL, "T", "spreadsheet nope does not exist (404): check the ID"},
		{"not shared", "gsheets://private?endpoint=" + s.URL, "T", "no access to spreadsheet private (403): share the spreadsheet with the service account's client_email"},
		{"refused token", "gsheets://" + book + "?token=S3CRET-token&endpoint=" + locked.URL, "T", "Google refused the credentials for spreadsheet " + book + " (401)"},
		{"unknown tab", sheetURL(s, ""), "Nope", `Nope: spreadsheet ` + book + ` has no such tab: not found (its tabs: "T", "Empty"`},
		{"unknown tabs=", sheetURL(s, "tabs=T,Nope"), "T", `has no tab "Nope" (tabs=): it has "T", "Empty"`},
		{"empty header", sheetURL(s, ""), "Empty", "Empty: header row 1 is empty"},
		{"header past the grid", sheetURL(s, "header_row=5000"), "T", "T: the tab has 1000 rows, no header row 5000"},
		{"unknown key", sheetURL(s, "key=nope"), "T", "T.nope: key= names no column of the header (header columns: id, name, score)"},
		{"unknown parameter", sheetURL(s, "sheet=T"), "T", `unknown parameter "sheet"`},
		{"bad page_rows", sheetURL(s, "page_rows=0"), "T", `page_rows: "0": want a whole number from 1 to 100000`},
		{"bad typed", sheetURL(s, "typed=yes"), "T", `typed="yes": want typed=1`},
		{"a path", "gsheets://" + book + "/T?endpoint=" + s.URL, "T", "want gsheets://SPREADSHEET_ID"},
		{"credentials not a key file", sheetURL(s, "credentials=/nonexistent/S3CRET.json"), "T", "gsheets: credentials file: no such file or directory"},
		{"credentials not a service account", sheetURL(s, "credentials="+userKey), "T", `gsheets: credentials file: type "authorized_user" (want a service account key file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := "file://" + t.TempDir()
			_, err := weir.Transfer(ctx, tt.url, dst, weir.TransferOptions{Tables: []string{tt.table}})
			if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v\nwant bad input containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "S3CRET") {
				t.Fatalf("the message shows the token: %v", err)
			}
		})
	}
}

// A token the peer accepts is sent as a bearer token.
func TestGSheets_Token(t *testing.T) {
	ctx := testContext(t)
	s := gs.NewServer(t)
	s.Token = "good-token"
	s.CreateSpreadsheet(book, false)
	s.SetTab(book, "T", numbered(3))
	if _, rows, err := read(t, ctx, "gsheets://"+book+"?token=good-token&endpoint="+s.URL, "T"); err != nil || len(rows) != 3 {
		t.Fatalf("read %d rows with the token: %v", len(rows), err)
	}
	if got := routes.Redact("gsheets://" + book + "?credentials=/keys/sa.json&token=good-token"); strings.Contains(got, "good-token") || strings.Contains(got, "sa.json") {
		t.Fatalf("redacted URL shows a credential: %s", got)
	}
}

// --schema SPREADSHEET_ID transfers every tab, or those in tabs=.
func TestGSheets_Schema(t *testing.T) {
	ctx := testContext(t)
	s := peer(t)
	for _, tab := range []string{"a", "b", "c"} {
		s.SetTab(book, tab, numbered(4))
	}
	for _, tt := range []struct{ query, want string }{{"", "a b c"}, {"tabs=c,a", "c a"}} {
		dst := "file://" + t.TempDir()
		rep, err := weir.Transfer(ctx, sheetURL(s, tt.query), dst, weir.TransferOptions{Schema: book})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tr := range rep.Tables {
			got = append(got, tr.Table)
			if n := rowsAt(t, ctx, dst, tr.Table); n != 4 {
				t.Fatalf("%s: %d rows", tr.Table, n)
			}
		}
		if strings.Join(got, " ") != tt.want {
			t.Fatalf("%q: tables %v, want %s", tt.query, got, tt.want)
		}
	}
	_, err := weir.Transfer(ctx, sheetURL(s, ""), "file://"+t.TempDir(), weir.TransferOptions{Schema: "public"})
	if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "the spreadsheet is the schema: --schema "+book+" (the URL's ID) transfers every tab") {
		t.Fatalf("--schema public: %v", err)
	}
}

// append on a declared cursor reads the rows past the destination's
// watermark.
func TestGSheets_AppendOnCursor(t *testing.T) {
	ctx := testContext(t)
	s := peer(t)
	s.SetTab(book, "T", numbered(10))
	dst := "file://" + t.TempDir()
	opts := weir.TransferOptions{Tables: []string{"T"}, Mode: routes.ModeAppend, Cursor: "id"}
	url := sheetURL(s, "typed=1&page_rows=4")
	if rep, err := weir.Transfer(ctx, url, dst, opts); err != nil || rep.Rows != 10 {
		t.Fatalf("first append: %d rows, %v", rep.Rows, err)
	}
	s.AppendRows(book, "T", numbered(15)[11:])
	rep, err := weir.Transfer(ctx, url, dst, opts)
	if err != nil || rep.Rows != 5 {
		t.Fatalf("second append: %d rows, want 5: %v", rep.Rows, err)
	}
	if n := rowsAt(t, ctx, dst, "T"); n != 15 {
		t.Fatalf("destination holds %d rows, want 15", n)
	}
	_, err = weir.Transfer(ctx, sheetURL(s, "page_rows=4"), dst, weir.TransferOptions{Tables: []string{"T"}, Mode: routes.ModeAppend})
	if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "pass --cursor COLUMN") {
		t.Fatalf("append without a cursor or key: %v", err)
	}
}

// A tab with its header only is known empty at the probe (every page of
// its grid read, none holding a row): a replace keeps the destination's
// table without preparing it, whatever its column types.
func TestGSheets_EmptyTabKeepsTable(t *testing.T) {
	ctx := testContext(t)
	s := peer(t)
	s.SetTab(book, "T", numbered(12))
	dst := fileDest(t, ctx, s, "T")
	s.SetTab(book, "T", numbered(0))
	s.SetGrid(book, "T", 35, 3)
	rep, err := weir.Transfer(ctx, sheetURL(s, "typed=1&page_rows=10"), dst, weir.TransferOptions{Tables: []string{"T"}})
	if err != nil || !rep.Tables[0].KeptEmpty {
		t.Fatalf("replace from an empty tab: %+v, %v", rep, err)
	}
	if n := rowsAt(t, ctx, dst, "T"); n != 12 {
		t.Fatalf("the destination holds %d rows, want the first run's 12", n)
	}
	want := "'T'!A1:C1 'T'!A2:C11 'T'!A12:C21 'T'!A22:C31 'T'!A32:C35"
	if got := s.Ranges(); !strings.HasSuffix(strings.Join(got, " "), want) {
		t.Fatalf("ranges read: %v, want the header and every page: %s", got, want)
	}
}

// A tab's title is the table name: one with blanks is quoted as any name
// part is (--table '"Sheet 1"'), one with a dot may be given bare.
func TestGSheets_TabNames(t *testing.T) {
	ctx := testContext(t)
	s := peer(t)
	s.SetTab(book, "Sheet 1", numbered(2))
	s.SetTab(book, "q1.sales", numbered(3))
	dst := "file://" + t.TempDir()
	for table, want := range map[string]int{`"Sheet 1"`: 2, "q1.sales": 3, `"q1.sales"`: 3} {
		rep, err := weir.Transfer(ctx, sheetURL(s, ""), dst, weir.TransferOptions{Tables: []string{table}, DestTable: "t"})
		if err != nil || rep.Rows != int64(want) {
			t.Fatalf("--table %s: %d rows, want %d: %v", table, rep.Rows, want, err)
		}
	}
	_, err := weir.Transfer(ctx, sheetURL(s, ""), dst, weir.TransferOptions{Tables: []string{"Sheet 1"}})
	if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "quote the name part") {
		t.Fatalf("--table Sheet 1 unquoted: %v", err)
	}
}
