package githubapitest

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
	_ "github.com/weirhq/weir/routes/githubapi" // github+api://
	"github.com/weirhq/weir/routes/routestest"
)

// CellScheme is the routes matrix's view of github+api:// in the
// conformance table's shape (routestest.Row: id, name, amount, ts, flag),
// registered by New for tests only. Each conformance table is a
// repository on the peer whose issues are its rows: id is the issue's id,
// name its body, amount its milestone's title (cast to decimal(12,2)), ts
// its closed_at (as a timestamp without zone) and flag its locked. The
// view opens github+api://OWNER/TABLE on the peer and reads its issues
// table through it (probe, Link-header paging, the cursor window), only
// renaming and casting those five columns.
const CellScheme = "githubapicell"

var registerCell sync.Once

// Fixture is the routes matrix's github+api:// source.
type Fixture struct {
	Server *Server
	owner  string
}

var _ routestest.Fixture = (*Fixture)(nil)

// New starts the peer (7 issues a page, so a conformance table spans many
// pages) and registers CellScheme.
func New(t testing.TB) *Fixture {
	registerCell.Do(func() { routes.Register(CellScheme, openCell) })
	s := NewServer(t)
	s.PageSize = 7
	return &Fixture{Server: s, owner: routestest.Name("weir")}
}

// URL is the view over the peer's repositories of the fixture's owner.
func (f *Fixture) URL() string {
	return CellScheme + "://" + f.owner + "?endpoint=" + url.QueryEscape(f.Server.URL)
}

// Ref is the table name (the repository's).
func (f *Fixture) Ref(name string) string { return name }

// Create makes repository name with one issue per row.
func (f *Fixture) Create(t testing.TB, ctx context.Context, name string, rows []routestest.Row) {
	f.Server.CreateRepo(f.owner + "/" + name)
	f.Insert(t, ctx, name, rows)
}

// Insert adds one issue per row.
func (f *Fixture) Insert(_ testing.TB, _ context.Context, name string, rows []routestest.Row) {
	for _, r := range rows {
		f.Server.Put(f.owner+"/"+name, "issues", issueOf(r))
	}
}

// Read fails: github+api:// is a source only.
func (f *Fixture) Read(t testing.TB, _ context.Context, name string) ([]routestest.Row, bool) {
	t.Fatalf("github+api:// is a source only: nothing reads %s back from it", name)
	return nil, false
}

// Staging is empty: github+api:// stages nothing.
func (f *Fixture) Staging(testing.TB, context.Context, string) []string { return nil }

var created = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)

// issueOf is a conformance row as GitHub would send an issue.
func issueOf(r routestest.Row) map[string]any {
	o := map[string]any{"id": r.ID, "node_id": "I_" + strconv.FormatInt(r.ID, 10), "number": r.ID,
		"title": fmt.Sprintf("row %d", r.ID), "state": "open", "user": map[string]any{"id": 1, "login": "weir"},
		"body": nil, "milestone": nil, "closed_at": nil, "locked": nil, "comments": 0,
		"created_at": created.Format(time.RFC3339), "updated_at": created.Add(time.Duration(r.ID) * time.Second).Format(time.RFC3339)}
	if r.Name != nil {
		o["body"] = *r.Name
	}
	if r.Amount != nil {
		o["milestone"] = map[string]any{"title": *r.Amount}
	}
	if r.TS != nil {
		o["closed_at"], o["state"] = r.TS.UTC().Format(time.RFC3339), "closed"
	}
	if r.Flag != nil {
		o["locked"] = *r.Flag
	}
	return o
}

// cellColumns: the conformance column, its issues column, and its type.
var cellColumns = []struct {
	name, from string
	typ        arrow.DataType
	native     string
}{
	{"id", "id", arrow.PrimitiveTypes.Int64, "bigint"},
	{"name", "body", arrow.BinaryTypes.String, "text"},
	{"amount", "milestone_title", &arrow.Decimal128Type{Precision: 12, Scale: 2}, "numeric(12,2)"},
	{"ts", "closed_at", &arrow.TimestampType{Unit: arrow.Microsecond}, "timestamp"},
	{"flag", "locked", arrow.FixedWidthTypes.Boolean, "boolean"},
}

func fromColumn(name string) (string, bool) {
	for _, c := range cellColumns {
		if c.name == name {
			return c.from, true
		}
	}
	return "", false
}

type cellSource struct {
	owner, endpoint string
	mu              sync.Mutex
	srcs            map[string]routes.Source
}

func openCell(_ context.Context, u *routes.URL) (routes.Endpoint, error) {
	return &cellSource{owner: u.URL().Host, endpoint: u.URL().Query().Get("endpoint"), srcs: map[string]routes.Source{}}, nil
}

// issues opens github+api:// on the table's repository and probes its issues.
func (c *cellSource) issues(ctx context.Context, table string) (routes.Source, *routes.TableInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	src, ok := c.srcs[table]
	if !ok {
		var err error
		src, err = routes.OpenSource(ctx, "github+api://"+c.owner+"/"+table+"?endpoint="+url.QueryEscape(c.endpoint))
		if err != nil {
			return nil, nil, err
		}
		c.srcs[table] = src
	}
	info, err := src.Probe(ctx, routes.TableRef{Name: "issues"})
	return src, info, err
}

func (c *cellSource) Close() error {
	for _, s := range c.srcs {
		s.Close()
	}
	return nil
}

func (c *cellSource) Probe(ctx context.Context, ref routes.TableRef) (*routes.TableInfo, error) {
	_, uinfo, err := c.issues(ctx, ref.Name)
	if err != nil {
		return nil, err
	}
	info := &routes.TableInfo{Scheme: CellScheme, SourceID: uinfo.SourceID, Ref: ref, PrimaryKey: []string{"id"}}
	for _, col := range cellColumns {
		info.Columns = append(info.Columns, routes.Column{Name: col.name, Type: col.typ, Nullable: col.name != "id", NativeType: col.native})
	}
	return info, nil
}

func (c *cellSource) Plan(_ context.Context, info *routes.TableInfo, _ routes.PlanOptions) ([]routes.Range, error) {
	return []routes.Range{{Table: info, Count: 1, Label: info.Ref.Name}}, nil
}

func (c *cellSource) Read(ctx context.Context, r routes.Range, opts routes.ReadOptions) (routes.Stream, error) {
	src, uinfo, err := c.issues(ctx, r.Table.Ref.Name)
	if err != nil {
		return nil, err
	}
	names := opts.Columns
	if names == nil {
		for _, col := range r.Table.Columns {
			names = append(names, col.Name)
		}
	}
	uopts := opts
	uopts.Columns = nil
	var fields []arrow.Field
	full := r.Table.Schema()
	for _, n := range names {
		from, ok := fromColumn(n)
		if !ok {
			return nil, fmt.Errorf("%s: no column %q", CellScheme, n)
		}
		uopts.Columns = append(uopts.Columns, from)
		fields = append(fields, full.Field(full.FieldIndices(n)[0]))
	}
	if opts.Cursor != "" {
		uopts.Cursor, _ = fromColumn(opts.Cursor)
	}
	u, err := src.Read(ctx, routes.Range{Table: uinfo, Count: 1, Label: r.Label}, uopts)
	if err != nil {
		return nil, err
	}
	md := full.Metadata()
	s := &cellStream{u: u, schema: arrow.NewSchema(fields, &md)}
	s.refs.Store(1)
	return s, nil
}

func (c *cellSource) MaxCursor(ctx context.Context, info *routes.TableInfo, cursor string) (string, bool, error) {
	src, uinfo, err := c.issues(ctx, info.Ref.Name)
	if err != nil {
		return "", false, err
	}
	from, _ := fromColumn(cursor)
	return src.(routes.CursorSource).MaxCursor(ctx, uinfo, from)
}

func (c *cellSource) NullCount(ctx context.Context, info *routes.TableInfo, column string) (int64, error) {
	src, uinfo, err := c.issues(ctx, info.Ref.Name)
	if err != nil {
		return 0, err
	}
	from, _ := fromColumn(column)
	return src.(routes.CursorSource).NullCount(ctx, uinfo, from)
}

// cellStream renames the issues' columns and casts amount and ts.
type cellStream struct {
	u      routes.Stream
	schema *arrow.Schema
	cur    arrow.RecordBatch
	err    error
	refs   atomic.Int64
}

func (s *cellStream) Schema() *arrow.Schema          { return s.schema }
func (s *cellStream) RecordBatch() arrow.RecordBatch { return s.cur }
func (s *cellStream) Record() arrow.RecordBatch      { return s.cur }
func (s *cellStream) Retain()                        { s.refs.Add(1) }

func (s *cellStream) Release() {
	if s.refs.Add(-1) == 0 {
		s.release()
		s.u.Release()
	}
}

func (s *cellStream) release() {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
}

func (s *cellStream) Err() error {
	if s.err != nil {
		return s.err
	}
	return s.u.Err()
}

// Rows and Bytes are the github+api stream's counts.
func (s *cellStream) Rows() int64 {
	if c, ok := s.u.(routes.Counter); ok {
		return c.Rows()
	}
	return 0
}

func (s *cellStream) Bytes() int64 {
	if c, ok := s.u.(routes.Counter); ok {
		return c.Bytes()
	}
	return 0
}

func (s *cellStream) Next() bool {
	s.release()
	if s.err != nil || !s.u.Next() {
		return false
	}
	in := s.u.RecordBatch()
	cols := make([]arrow.Array, in.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, f := range s.schema.Fields() {
		a := in.Column(i)
		switch f.Name {
		case "amount":
			b := array.NewDecimal128Builder(memory.DefaultAllocator, f.Type.(*arrow.Decimal128Type))
			str := a.(*array.String)
			for j := 0; j < a.Len(); j++ {
				if a.IsNull(j) {
					b.AppendNull()
					continue
				}
				n, err := decimal128.FromString(str.Value(j), 12, 2)
				if err != nil {
					s.err = fmt.Errorf("amount %q: %w", str.Value(j), err)
					b.Release()
					return false
				}
				b.Append(n)
			}
			cols[i] = b.NewArray()
			b.Release()
		case "ts":
			b := array.NewTimestampBuilder(memory.DefaultAllocator, f.Type.(*arrow.TimestampType))
			ts := a.(*array.Timestamp)
			for j := 0; j < a.Len(); j++ {
				if a.IsNull(j) {
					b.AppendNull()
				} else {
					b.Append(ts.Value(j))
				}
			}
			cols[i] = b.NewArray()
			b.Release()
		default:
			a.Retain()
			cols[i] = a
		}
	}
	s.cur = array.NewRecordBatch(s.schema, cols, in.NumRows())
	return true
}
