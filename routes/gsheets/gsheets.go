// Package gsheets is the gsheets:// source: the tabs of one Google
// Sheets spreadsheet read as tables through the Sheets v4 API
// (google.golang.org/api/sheets/v4), a page of rows at a time.
//
//	gsheets://SPREADSHEET_ID[?tabs=a,b&header_row=1&typed=1&key=id&page_rows=10000&credentials=key.json&token=…&endpoint=…]
//
// Each tab is a table; its header row names the columns. A source only.
package gsheets

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	sheets "google.golang.org/api/sheets/v4"

	"github.com/weirhq/weir/routes"
)

// Scheme is the URL scheme.
const Scheme = "gsheets"

// params are gsheets://'s query parameters.
var params = []string{"tabs", "header_row", "typed", "key", "page_rows", "credentials", "token", "endpoint"}

// DefaultPageRows is how many rows one values.get request reads.
const DefaultPageRows = 10_000

// maxPageRows bounds page_rows: a page is held whole while it is decoded.
const maxPageRows = 100_000

func init() {
	routes.RegisterScheme(routes.SchemeInfo{Name: Scheme, Source: true}, open)
}

// config is a parsed gsheets:// URL.
type config struct {
	id          string
	tabs        []string // tabs= (the --schema tables), empty: all
	headerRow   int
	typed       bool
	key         []string
	pageRows    int
	credentials string // a service account key file
	token       string // an OAuth access token
	endpoint    string // the API's base URL (a test peer)
}

func parseConfig(u *routes.URL) (config, error) {
	q := u.URL().Query()
	for k := range q {
		if !slices.Contains(params, k) {
			return config{}, routes.BadInput("%s: unknown parameter %q (known: %s)", u, k, strings.Join(params, ", "))
		}
	}
	c := config{id: u.URL().Host, headerRow: 1, pageRows: DefaultPageRows,
		credentials: q.Get("credentials"), token: q.Get("token"), endpoint: q.Get("endpoint")}
	if c.id == "" || strings.Trim(u.URL().Path, "/") != "" {
		return c, routes.BadInput("%s: want gsheets://SPREADSHEET_ID (the part of the sheet's address between /d/ and /edit)", u)
	}
	var err error
	if c.headerRow, err = intParam(q.Get("header_row"), 1, 1, 10_000_000); err != nil {
		return c, routes.BadInput("%s: header_row: %v", u, err)
	}
	if c.pageRows, err = intParam(q.Get("page_rows"), DefaultPageRows, 1, maxPageRows); err != nil {
		return c, routes.BadInput("%s: page_rows: %v", u, err)
	}
	switch q.Get("typed") {
	case "", "0", "false":
	case "1", "true":
		c.typed = true
	default:
		return c, routes.BadInput("%s: typed=%q: want typed=1 (infer types) or typed=0 (all text, the default)", u, q.Get("typed"))
	}
	c.tabs = list(q.Get("tabs"))
	c.key = list(q.Get("key"))
	return c, nil
}

func intParam(s string, def, lo, hi int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%q: want a whole number from %d to %d", s, lo, hi)
	}
	return n, nil
}

func list(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Source reads the tabs of one spreadsheet.
type Source struct {
	url *routes.URL
	cfg config
	api *api
}

var (
	_ routes.Source       = (*Source)(nil)
	_ routes.CursorSource = (*Source)(nil)
	_ routes.TableLister  = (*Source)(nil)
)

// open checks the spreadsheet and the credentials with one request (the
// tab list), and the tabs= names against it: bad input fails here.
func open(ctx context.Context, u *routes.URL) (routes.Endpoint, error) {
	cfg, err := parseConfig(u)
	if err != nil {
		return nil, err
	}
	a, err := newAPI(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s := &Source{url: u, cfg: cfg, api: a}
	tabs, err := a.tabs(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range cfg.tabs {
		if find(tabs, t) == nil {
			return nil, routes.BadInput("gsheets: spreadsheet %s has no tab %q (tabs=): it has %s", cfg.id, t, titles(tabs))
		}
	}
	return s, nil
}

// Close releases nothing: the client holds no connection of its own.
func (s *Source) Close() error { return nil }

func find(tabs []*sheets.Sheet, title string) *sheets.Sheet {
	for _, t := range tabs {
		if t.Properties != nil && t.Properties.Title == title {
			return t
		}
	}
	return nil
}

func titles(tabs []*sheets.Sheet) string {
	var out []string
	for _, t := range tabs {
		if t.Properties != nil {
			out = append(out, strconv.Quote(t.Properties.Title))
		}
	}
	return strings.Join(out, ", ")
}

// grid is a tab's size as the API reports it.
type grid struct{ rows, cols int }

// tab finds a tab and its grid now (rows may have been added since the
// source opened).
func (s *Source) tab(ctx context.Context, title string) (grid, error) {
	tabs, err := s.api.tabs(ctx)
	if err != nil {
		return grid{}, err
	}
	t := find(tabs, title)
	if t == nil {
		return grid{}, &routes.ProbeError{Table: title, Problem: fmt.Sprintf("spreadsheet %s has no such tab", s.cfg.id), Err: routes.ErrNotFound,
			Hint: "its tabs: " + titles(tabs) + `; quote a name with blanks: --table '"Sheet 1"'`}
	}
	if t.Properties.SheetType != "" && t.Properties.SheetType != "GRID" {
		return grid{}, &routes.ProbeError{Table: title, Problem: fmt.Sprintf("tab is a %s sheet, not a grid of cells", t.Properties.SheetType)}
	}
	g := grid{}
	if gp := t.Properties.GridProperties; gp != nil {
		g = grid{rows: int(gp.RowCount), cols: int(gp.ColumnCount)}
	}
	return g, nil
}

// ListTables lists the tabs= tabs, else every grid tab: the spreadsheet
// is the schema (--schema SPREADSHEET_ID).
func (s *Source) ListTables(ctx context.Context, schema string) ([]routes.TableRef, error) {
	if schema != "" && schema != s.cfg.id {
		return nil, routes.BadInput("gsheets: the spreadsheet is the schema: --schema %s (the URL's ID) transfers every tab, or those in tabs=; %q is another", s.cfg.id, schema)
	}
	var out []routes.TableRef
	if len(s.cfg.tabs) > 0 {
		for _, t := range s.cfg.tabs {
			out = append(out, routes.TableRef{Name: t})
		}
		return out, nil
	}
	tabs, err := s.api.tabs(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range tabs {
		if t.Properties != nil && (t.Properties.SheetType == "" || t.Properties.SheetType == "GRID") {
			out = append(out, routes.TableRef{Name: t.Properties.Title})
		}
	}
	return out, nil
}

// title is a table reference as a tab title: a tab named a.b may be
// given unquoted (schema a, table b).
func title(ref routes.TableRef) string { return ref.String() }

// Probe reads the tab's header row and its first page of rows: the
// columns (all text, or typed=1's inferred types), and bad input in those
// rows (a row wider than the header) before any row moves.
func (s *Source) Probe(ctx context.Context, ref routes.TableRef) (*routes.TableInfo, error) {
	name := title(ref)
	g, err := s.tab(ctx, name)
	if err != nil {
		return nil, err
	}
	h := s.cfg.headerRow
	perr := func(problem, hint string) error { return &routes.ProbeError{Table: name, Problem: problem, Hint: hint} }
	if g.cols == 0 || g.rows < h {
		return nil, perr(fmt.Sprintf("the tab has %d rows, no header row %d", g.rows, h), "set header_row= to the row that names the columns")
	}
	head, err := s.api.values(ctx, a1(name, 1, g.cols, h, h), false)
	if err != nil {
		return nil, err
	}
	if len(head) == 0 || len(head[0]) == 0 {
		return nil, perr(fmt.Sprintf("header row %d is empty", h), "the header row names the columns: set header_row= to that row")
	}
	names := headerNames(head[0])
	info := &routes.TableInfo{Scheme: Scheme, SourceID: s.url.Identity() + "#" + name, Ref: routes.TableRef{Name: name},
		RowEstimate: int64(g.rows - h)}
	kinds := make([]kind, len(names))
	info.Empty = true
	// The first page that holds a row decides the types; pages of blank
	// rows before it are read on, so a tab with no row is known empty.
	for first := h + 1; first <= g.rows && info.Empty; first += s.cfg.pageRows {
		last := min(first+s.cfg.pageRows-1, g.rows)
		rows, err := s.api.values(ctx, a1(name, 1, g.cols, first, last), s.cfg.typed)
		if err != nil {
			return nil, err
		}
		for i, row := range rows {
			if allBlank(row) {
				continue
			}
			info.Empty = false
			if err := checkWidth(name, row, first+i, names, h); err != nil {
				return nil, err
			}
			for c, v := range row {
				if !blank(v) {
					kinds[c] |= kindOf(v)
				}
			}
		}
	}
	for i, n := range names {
		col := routes.Column{Name: n, Type: arrow.BinaryTypes.String, Nullable: true, NativeType: nativeText}
		if s.cfg.typed {
			col.Type, col.NativeType = inferType(kinds[i])
		}
		info.Columns = append(info.Columns, col)
	}
	for _, k := range s.cfg.key {
		if _, ok := info.Column(k); !ok {
			return nil, &routes.ProbeError{Table: name, Column: k, Problem: "key= names no column of the header", Hint: "header columns: " + strings.Join(names, ", ")}
		}
	}
	info.PrimaryKey = slices.Clone(s.cfg.key)
	return info, nil
}

// checkWidth refuses a row with a value past the header's last column:
// its column has no name.
func checkWidth(tab string, row []any, rowNum int, names []string, headerRow int) error {
	for c := len(names); c < len(row); c++ {
		if !blank(row[c]) {
			return routes.BadInput("gsheets tab %q row %d has a value in column %s, past the header's last column %s (%q): name that column in header row %d, or clear the cell",
				tab, rowNum, columnLetters(c+1), columnLetters(len(names)), names[len(names)-1], headerRow)
		}
	}
	return nil
}

// rangeSpec is what Plan hands Read in a Range's predicate.
type rangeSpec struct {
	Tab   string `json:"tab"`
	First int    `json:"first"` // first data row (1-based sheet row)
	Last  int    `json:"last"`  // last row of the grid
	Cols  int    `json:"cols"`  // columns of the grid
}

// Plan makes one range per tab: its rows after the header, up to the
// grid's last row now, read in pages by one pipe (the API's per-minute
// read quota, not the transfer's parallelism, bounds a spreadsheet).
func (s *Source) Plan(ctx context.Context, info *routes.TableInfo, _ routes.PlanOptions) ([]routes.Range, error) {
	g, err := s.tab(ctx, info.Ref.Name)
	if err != nil {
		return nil, err
	}
	spec := rangeSpec{Tab: info.Ref.Name, First: s.cfg.headerRow + 1, Last: g.rows, Cols: g.cols}
	b, _ := json.Marshal(spec)
	return []routes.Range{{Table: info, Index: 0, Count: 1, Predicate: string(b),
		Label: fmt.Sprintf("tab %q rows %d-%d", spec.Tab, spec.First, spec.Last)}}, nil
}
