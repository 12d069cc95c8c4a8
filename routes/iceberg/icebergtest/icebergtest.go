// Package icebergtest is the Iceberg fixture of the routes matrix: a SQL
// catalog on an embedded SQLite database with a file warehouse, both in
// the test's temp dir (or, with NewOnPostgres, a catalog on the test
// PostgreSQL server; with NewREST, a REST catalog served in the test; with
// the option S3Warehouse, the warehouse on an in-process gofakes3), and
// one namespace per test.
package icebergtest

import (
	"context"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
	wice "github.com/weirhq/weir/routes/iceberg"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/routestest"
)

var _ routestest.Fixture = (*Fixture)(nil)

// Fixture is one test's namespace in a catalog.
type Fixture struct {
	Namespace string
	Dir       string // the temp dir holding catalog.db and warehouse/
	url       string
	ep        *wice.Endpoint
}

// Option changes where a fixture keeps its data.
type Option func(*options)

type options struct{ s3 bool }

// S3Warehouse puts the warehouse on a fresh prefix of an in-process
// gofakes3 server (objstoretest.S3Server) instead of the temp dir, through
// iceberg-go's S3 FileIO, with the access key in the warehouse URL.
func S3Warehouse() Option { return func(o *options) { o.s3 = true } }

// warehouse returns the query parameters that place the warehouse.
func warehouse(t testing.TB, dir string, opts []Option) string {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if !o.s3 {
		return "warehouse=file://" + dir + "/warehouse"
	}
	endpoint, _ := objstoretest.S3Server(t)
	return "warehouse=s3://weirkey:weirsecret@" + objstoretest.Bucket + "/" + routestest.Name("lake") +
		"&endpoint=" + url.QueryEscape(endpoint) + "&region=us-east-1"
}

// NewREST serves a REST catalog in the test (StartRESTServer: a SQL
// catalog on SQLite behind the REST endpoints) and opens it through
// iceberg+rest://. The server holds the warehouse (file, or with
// S3Warehouse gofakes3) and vends its FileIO properties with each table;
// weir's URL names only the catalog's address.
func NewREST(t testing.TB, opts ...Option) *Fixture {
	t.Helper()
	dir := t.TempDir()
	q, err := url.ParseQuery(warehouse(t, dir, opts))
	if err != nil {
		t.Fatal(err)
	}
	props := iceberg.Properties{"warehouse": q.Get("warehouse")}
	if ep := q.Get("endpoint"); ep != "" {
		w, _ := url.Parse(q.Get("warehouse"))
		secret, _ := w.User.Password()
		props = iceberg.Properties{"warehouse": "s3://" + w.Host + w.Path, "s3.endpoint": ep, "s3.region": q.Get("region"),
			"s3.access-key-id": w.User.Username(), "s3.secret-access-key": secret}
	}
	srv := StartRESTServer(t, dir+"/rest-catalog.db", props)
	return open(t, "iceberg+rest://"+strings.TrimPrefix(srv.URL, "http://")+"/", dir)
}

// New makes a SQLite catalog in a temp dir, with a file warehouse beside
// it (or, with S3Warehouse, on gofakes3).
func New(t testing.TB, opts ...Option) *Fixture {
	t.Helper()
	dir := t.TempDir()
	raw := "iceberg://?catalog=sql&uri=sqlite://" + dir + "/catalog.db&" + warehouse(t, dir, opts)
	return open(t, raw, dir)
}

// NewOnPostgres keeps the catalog in the PostgreSQL database at pgURL
// (its iceberg_tables and weir_locks), with a file warehouse in a temp dir
// (or, with S3Warehouse, on gofakes3).
func NewOnPostgres(t testing.TB, pgURL string, opts ...Option) *Fixture {
	t.Helper()
	dir := t.TempDir()
	raw := "iceberg://?catalog=sql&uri=" + url.QueryEscape(pgURL) + "&" + warehouse(t, dir, opts)
	return open(t, raw, dir)
}

func open(t testing.TB, raw, dir string) *Fixture {
	ctx := routestest.Context(t, time.Minute)
	ep, err := routes.Open(ctx, raw)
	if err != nil {
		t.Fatalf("open %s: %v", raw, err)
	}
	f := &Fixture{Namespace: routestest.Name("weir_t"), Dir: dir, url: raw, ep: ep.(*wice.Endpoint)}
	t.Cleanup(func() {
		f.dropNamespace()
		ep.Close()
	})
	return f
}

// dropNamespace removes the fixture's tables and namespace from the
// catalog (a catalog on a shared PostgreSQL outlives the test).
func (f *Fixture) dropNamespace() {
	ctx, cancel := routestest.CleanupContext()
	defer cancel()
	cat := f.ep.Catalog()
	var ids []table.Identifier
	for id, err := range cat.ListTables(ctx, table.Identifier{f.Namespace}) {
		if err != nil {
			break
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		cat.DropTable(ctx, id)
	}
	cat.DropNamespace(ctx, table.Identifier{f.Namespace})
}

// Endpoint is the fixture's own open endpoint.
func (f *Fixture) Endpoint() *wice.Endpoint { return f.ep }

// URL is the iceberg:// URL of the catalog.
func (f *Fixture) URL() string { return f.url }

// Ref qualifies a table with the fixture's namespace.
func (f *Fixture) Ref(name string) string { return f.Namespace + "." + name }

// TableRef is Ref as a routes.TableRef.
func (f *Fixture) TableRef(name string) routes.TableRef {
	return routes.TableRef{Schema: f.Namespace, Name: name}
}

// Schema is the conformance table in Iceberg: id long (the identifier),
// name string, amount decimal(12,2), ts timestamp, flag boolean.
func Schema() *iceberg.Schema {
	return iceberg.NewSchemaWithIdentifiers(0, []int{1},
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "amount", Type: iceberg.DecimalTypeOf(12, 2)},
		iceberg.NestedField{ID: 4, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 5, Name: "flag", Type: iceberg.PrimitiveTypes.Bool})
}

// Create makes the conformance table (as another engine would: no weir
// state) holding rows.
func (f *Fixture) Create(t testing.TB, ctx context.Context, name string, rows []routestest.Row) {
	t.Helper()
	cat := f.ep.Catalog()
	err := cat.CreateNamespace(ctx, table.Identifier{f.Namespace}, nil)
	if err != nil && !isExists(err) {
		t.Fatalf("create namespace: %v", err)
	}
	props := iceberg.Properties{"format-version": "2"}
	if _, err := cat.CreateTable(ctx, table.Identifier{f.Namespace, name}, Schema(), catalog.WithProperties(props)); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	if len(rows) > 0 {
		f.Insert(t, ctx, name, rows)
	}
}

// CreateKeyless makes a table of one optional long column, id, with no
// identifier field (routestest.SourceFixture), in one append snapshot.
func (f *Fixture) CreateKeyless(t testing.TB, ctx context.Context, name string, ids []*int64) {
	t.Helper()
	cat := f.ep.Catalog()
	if err := cat.CreateNamespace(ctx, table.Identifier{f.Namespace}, nil); err != nil && !isExists(err) {
		t.Fatalf("create namespace: %v", err)
	}
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64})
	tbl, err := cat.CreateTable(ctx, table.Identifier{f.Namespace, name}, sc, catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	appendBatch(t, ctx, tbl, routestest.KeylessBatch(memory.DefaultAllocator, ids))
}

func isExists(err error) bool {
	return errorsIs(err, catalog.ErrNamespaceAlreadyExists)
}

// Insert appends rows in one append snapshot.
func (f *Fixture) Insert(t testing.TB, ctx context.Context, name string, rows []routestest.Row) {
	t.Helper()
	tbl, err := f.ep.LoadTable(ctx, f.TableRef(name))
	if err != nil {
		t.Fatal(err)
	}
	appendBatch(t, ctx, tbl, Batch(t, tbl.Schema(), rows))
}

// appendBatch appends rec to tbl in one snapshot, and releases it.
func appendBatch(t testing.TB, ctx context.Context, tbl *table.Table, rec arrow.RecordBatch) {
	t.Helper()
	defer rec.Release()
	rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	if _, err := tbl.Append(ctx, rdr, nil); err != nil {
		t.Fatalf("append to %s: %v", tbl.Identifier(), err)
	}
}

// Batch renders conformance rows as one Arrow batch of sc.
func Batch(t testing.TB, sc *iceberg.Schema, rows []routestest.Row) arrow.RecordBatch {
	t.Helper()
	as, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.ID)
		appendRow(t, b, r)
	}
	return b.NewRecordBatch()
}

func appendRow(t testing.TB, b *array.RecordBuilder, r routestest.Row) {
	if r.Name == nil {
		b.Field(1).AppendNull()
	} else {
		b.Field(1).(*array.StringBuilder).Append(*r.Name)
	}
	if r.Amount == nil {
		b.Field(2).AppendNull()
	} else {
		n, err := decimal128.FromString(*r.Amount, 12, 2)
		if err != nil {
			t.Fatal(err)
		}
		b.Field(2).(*array.Decimal128Builder).Append(n)
	}
	if r.TS == nil {
		b.Field(3).AppendNull()
	} else {
		b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(r.TS.UnixMicro()))
	}
	if r.Flag == nil {
		b.Field(4).AppendNull()
	} else {
		b.Field(4).(*array.BooleanBuilder).Append(*r.Flag)
	}
}

// Read scans the current snapshot into conformance rows, sorted by id.
func (f *Fixture) Read(t testing.TB, ctx context.Context, name string) ([]routestest.Row, bool) {
	t.Helper()
	tbl, err := f.ep.LoadTable(ctx, f.TableRef(name))
	if errorsIs(err, routes.ErrNotFound) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	_, batches, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		t.Fatalf("scan %s: %v", name, err)
	}
	var out []routestest.Row
	for rec, err := range batches {
		if err != nil {
			t.Fatalf("scan %s: %v", name, err)
		}
		out = append(out, Rows(t, rec)...)
		rec.Release()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, true
}

// Staging lists what a run may leave for a table: a held lease and data
// files no snapshot references.
func (f *Fixture) Staging(t testing.TB, ctx context.Context, name string) []string {
	t.Helper()
	ref := f.TableRef(name)
	var left []string
	if run, held, err := f.ep.LockHolder(ctx, ref); err != nil {
		t.Fatal(err)
	} else if held {
		left = append(left, "lease of run "+run)
	}
	orphans, err := f.ep.Orphans(ctx, ref)
	if err != nil && !errorsIs(err, routes.ErrNotFound) {
		t.Fatal(err)
	}
	return append(left, orphans...)
}
