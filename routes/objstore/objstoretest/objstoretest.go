// Package objstoretest holds the object-store fixtures of the routes
// matrix: a temp directory for file://, an in-process gofakes3 server for
// s3:// and an in-process fake-gcs-server for gcs://. Tables are weir
// tables (a manifest and its files) under a per-test prefix.
package objstoretest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/objstore"
	"github.com/weirhq/weir/routes/routestest"
)

// Bucket is the bucket the S3 and GCS fakes create.
const Bucket = "weir"

// Fixture is one test's prefix on one store.
type Fixture struct {
	url  string
	root string                                            // the file fixture's directory
	list func(ctx context.Context, prefix string) []string // keys under prefix, relative to the fixture's
	put  func(key string, data []byte) error               // writes an object behind weir's back
	get  func(key string) ([]byte, error)
}

var _ routestest.Fixture = (*Fixture)(nil)

// NewFile returns a fixture on a temp directory; query is appended to the
// URL (e.g. "format=csv.gz").
func NewFile(t testing.TB, query ...string) *Fixture {
	dir := t.TempDir()
	f := &Fixture{url: withQuery("file://"+dir, query), root: dir}
	f.list = f.listThroughRoute(t)
	f.put = func(key string, data []byte) error {
		p := filepath.Join(dir, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, data, 0o644)
	}
	f.get = func(key string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, filepath.FromSlash(key))) }
	return f
}

// NewS3 starts gofakes3 for the test and returns a fixture on a fresh
// prefix of its bucket.
func NewS3(t testing.TB, query ...string) *Fixture {
	endpoint, backend := S3Server(t)
	q := append([]string{"endpoint=" + endpoint, "region=us-east-1"}, query...)
	prefix := routestest.Name("t")
	f := &Fixture{url: withQuery(fmt.Sprintf("s3://test:test@%s/%s", Bucket, prefix), q)}
	f.list = f.listThroughRoute(t)
	f.put = func(key string, data []byte) error {
		_, err := backend.PutObject(Bucket, prefix+"/"+key, map[string]string{}, bytes.NewReader(data), int64(len(data)), nil)
		return err
	}
	f.get = func(key string) ([]byte, error) {
		obj, err := backend.GetObject(Bucket, prefix+"/"+key, nil)
		if err != nil {
			return nil, err
		}
		defer obj.Contents.Close()
		return io.ReadAll(obj.Contents)
	}
	return f
}

// S3Server starts gofakes3 (in memory) for the test, with the bucket
// Bucket, and returns its endpoint URL and its backend. It accepts any
// credentials.
func S3Server(t testing.TB) (string, *s3mem.Backend) {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(Bucket); err != nil {
		t.Fatalf("gofakes3 bucket: %v", err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	return srv.URL, backend
}

// NewGCS starts fake-gcs-server for the test and returns a fixture on a
// fresh prefix of its bucket.
func NewGCS(t testing.TB, query ...string) *Fixture {
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", Writer: discard{}})
	if err != nil {
		t.Fatalf("fake-gcs-server: %v", err)
	}
	t.Cleanup(srv.Stop)
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: Bucket})
	q := append([]string{"endpoint=" + srv.URL()}, query...)
	prefix := routestest.Name("t")
	f := &Fixture{url: withQuery(fmt.Sprintf("gcs://%s/%s", Bucket, prefix), q)}
	f.list = f.listThroughRoute(t)
	f.put = func(key string, data []byte) error {
		srv.CreateObject(fakestorage.Object{ObjectAttrs: fakestorage.ObjectAttrs{BucketName: Bucket, Name: prefix + "/" + key}, Content: data})
		return nil
	}
	f.get = func(key string) ([]byte, error) {
		obj, err := srv.GetObject(Bucket, prefix+"/"+key)
		return obj.Content, err
	}
	return f
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func withQuery(u string, query []string) string {
	if len(query) == 0 {
		return u
	}
	return u + "?" + strings.Join(query, "&")
}

// URL is the endpoint URL weir opens.
func (f *Fixture) URL() string { return f.url }

// Ref returns the table name as is: a path under the fixture's prefix.
func (f *Fixture) Ref(name string) string { return name }

// Endpoint opens the fixture's endpoint.
func (f *Fixture) Endpoint(t testing.TB, ctx context.Context) *objstore.Endpoint {
	t.Helper()
	ep, err := routes.Open(ctx, f.url)
	if err != nil {
		t.Fatalf("open %s: %v", f.url, err)
	}
	t.Cleanup(func() { ep.Close() })
	return ep.(*objstore.Endpoint)
}

// Create writes the conformance table name holding rows as a weir table
// (primary key id), an empty one included.
func (f *Fixture) Create(t testing.TB, ctx context.Context, name string, rows []routestest.Row) {
	f.write(t, ctx, name, rows, routes.ModeReplace)
}

// CreateKeyless writes a weir table of one nullable bigint column, id,
// with no primary key (routestest.SourceFixture).
func (f *Fixture) CreateKeyless(t testing.TB, ctx context.Context, name string, ids []*int64) {
	info := routestest.KeylessInfo(name)
	f.commit(t, ctx, info, routestest.BatchStream(ctx, info.Schema(), routestest.KeylessBatch(memory.DefaultAllocator, ids)), routes.ModeReplace)
}

// Insert appends rows to the table as one run.
func (f *Fixture) Insert(t testing.TB, ctx context.Context, name string, rows []routestest.Row) {
	f.write(t, ctx, name, rows, routes.ModeAppend)
}

func (f *Fixture) write(t testing.TB, ctx context.Context, name string, rows []routestest.Row, mode routes.Mode) {
	src := &routestest.MemSource{Table: routestest.MemInfo(name), Rows: rows}
	ranges, _ := src.Plan(ctx, src.Table, routes.PlanOptions{Pipes: 1})
	s, _ := src.Read(ctx, ranges[0], routes.ReadOptions{})
	f.commit(t, ctx, src.Table, s, mode)
}

// commit writes the stream s as one run into info's table, and releases s.
func (f *Fixture) commit(t testing.TB, ctx context.Context, info *routes.TableInfo, s routes.Stream, mode routes.Mode) {
	t.Helper()
	defer s.Release()
	stage, err := f.Endpoint(t, ctx).Prepare(ctx, info, routes.WriteOptions{Table: info.Ref, Mode: mode, RunID: routes.NewRunID()})
	if err != nil {
		t.Fatalf("prepare %s: %v", info.Ref, err)
	}
	n, err := stage.Write(ctx, s)
	if err == nil {
		err = stage.Commit(ctx, routes.State{SourceID: "objstoretest", Rows: n})
	}
	if err != nil {
		stage.Abort(ctx)
		t.Fatalf("write %s: %v", info.Ref, err)
	}
}

// Read returns the table's rows by id, rendered as routestest.Row (amount
// with two decimals, ts in UTC whole seconds); false if it does not exist.
func (f *Fixture) Read(t testing.TB, ctx context.Context, name string) ([]routestest.Row, bool) {
	t.Helper()
	ep := f.Endpoint(t, ctx)
	info, err := ep.Probe(ctx, routes.TableRef{Name: name})
	if errors.Is(err, routes.ErrNotFound) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("probe %s: %v", name, err)
	}
	var out []routestest.Row
	err = ReadAll(ctx, ep, info, func(rec arrow.RecordBatch) error {
		rows, err := ToRows(rec)
		out = append(out, rows...)
		return err
	})
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, true
}

// ReadAll reads every range of a table in turn.
func ReadAll(ctx context.Context, src routes.Source, info *routes.TableInfo, each func(arrow.RecordBatch) error) error {
	ranges, err := src.Plan(ctx, info, routes.PlanOptions{Pipes: 4})
	if err != nil {
		return err
	}
	for _, r := range ranges {
		s, err := src.Read(ctx, r, routes.ReadOptions{})
		if err != nil {
			return err
		}
		for err == nil && s.Next() {
			err = each(s.RecordBatch())
		}
		if err == nil {
			err = s.Err()
		}
		s.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// ToRows renders a batch of the conformance columns as rows.
func ToRows(rec arrow.RecordBatch) ([]routestest.Row, error) {
	col := func(name string) arrow.Array {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) == 0 {
			return nil
		}
		return rec.Column(idx[0])
	}
	out := make([]routestest.Row, rec.NumRows())
	for i := range out {
		r, err := toRow(col, i)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

func toRow(col func(string) arrow.Array, i int) (routestest.Row, error) {
	var r routestest.Row
	id, ok := col("id").(*array.Int64)
	if !ok {
		return r, fmt.Errorf("id is %s, want int64", col("id").DataType())
	}
	r.ID = id.Value(i)
	if a := col("name"); a != nil && a.IsValid(i) {
		s := strings.Clone(a.ValueStr(i)) // a string array's value points into its buffer, released with the batch
		r.Name = &s
	}
	if a := col("amount"); a != nil && a.IsValid(i) {
		s := amountText(a, i)
		r.Amount = &s
	}
	if a, ok := col("ts").(*array.Timestamp); ok && a.IsValid(i) {
		ts := a.Value(i).ToTime(a.DataType().(*arrow.TimestampType).Unit).UTC().Truncate(time.Second)
		r.TS = &ts
	}
	if a := col("flag"); a != nil && a.IsValid(i) {
		b := flagValue(a, i)
		r.Flag = &b
	}
	return r, nil
}

// flagValue reads a flag that a source without booleans (ClickHouse 18.16's
// UInt8) wrote as an integer.
func flagValue(a arrow.Array, i int) bool {
	switch a := a.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Uint8:
		return a.Value(i) != 0
	case *array.Int8:
		return a.Value(i) != 0
	}
	return a.ValueStr(i) != "0"
}

func amountText(a arrow.Array, i int) string {
	switch a := a.(type) {
	case *array.Decimal128:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Float64:
		return fmt.Sprintf("%.2f", a.Value(i))
	}
	return a.ValueStr(i)
}

// Staging lists what a run left behind for table name: files in the
// table's folder the manifest does not list (other than the manifest), a
// lock, and anything in the table's staging folder.
func (f *Fixture) Staging(t testing.TB, ctx context.Context, name string) []string {
	t.Helper()
	listed := map[string]bool{name + "/" + objstore.ManifestName: true}
	ep := f.Endpoint(t, ctx)
	if m, ok := ReadManifest(t, ctx, ep, name); ok {
		for _, file := range m.Files {
			listed[name+"/"+file.Path] = true
		}
	}
	var left []string
	for _, k := range f.list(ctx, name) {
		if !listed[k] {
			left = append(left, k)
		}
	}
	return append(left, f.list(ctx, StagingDir(name))...)
}

// StagingDir is the folder where runs of table name stage their files.
func StagingDir(name string) string {
	parent, base := path.Split(name)
	return parent + objstore.StagingName + "/" + base
}

// Mirror returns a local directory holding a copy of every object of
// table name's folder and its staging folder, at their keys: what a tool
// globbing the store would find (the file fixture's own directory).
func (f *Fixture) Mirror(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	if f.root != "" {
		return f.root
	}
	dir := t.TempDir()
	for _, k := range append(f.list(ctx, name), f.list(ctx, StagingDir(name))...) {
		p := filepath.Join(dir, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Get(t, k), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Keys lists every object under a table's folder.
func (f *Fixture) Keys(ctx context.Context, name string) []string { return f.list(ctx, name) }

func (f *Fixture) listThroughRoute(t testing.TB) func(ctx context.Context, prefix string) []string {
	return func(ctx context.Context, prefix string) []string {
		keys, err := f.Endpoint(t, ctx).Objects(ctx, routes.TableRef{Name: prefix})
		if err != nil {
			t.Fatalf("list %s: %v", prefix, err)
		}
		return keys
	}
}

// ReadManifest returns table name's manifest.
func ReadManifest(t testing.TB, ctx context.Context, ep *objstore.Endpoint, name string) (*objstore.Manifest, bool) {
	t.Helper()
	m, ok, err := ep.Manifest(ctx, routes.TableRef{Name: name})
	if err != nil {
		t.Fatalf("manifest of %s: %v", name, err)
	}
	return m, ok
}

// Put writes an object (key relative to the fixture's prefix) behind
// weir's back: a data file from another tool, a stale lock.
func (f *Fixture) Put(t testing.TB, key string, data []byte) {
	t.Helper()
	if err := f.put(key, data); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

// Get reads an object (key relative to the fixture's prefix) behind weir's
// back.
func (f *Fixture) Get(t testing.TB, key string) []byte {
	t.Helper()
	b, err := f.get(key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	return b
}

// CreateOldLayout writes table name holding rows the way weir laid tables
// out before runs staged their files next to the table: data files under
// <name>/run=<runid>/part-<pipe>-<n>.<format>, listed so by the manifest.
// It writes the table with weir under a scratch name and moves the files
// (and the rewritten manifest) to name behind weir's back.
func (f *Fixture) CreateOldLayout(t testing.TB, ctx context.Context, name string, rows []routestest.Row) {
	t.Helper()
	scratch := name + "_new_layout"
	f.Create(t, ctx, scratch, rows)
	m, _ := ReadManifest(t, ctx, f.Endpoint(t, ctx), scratch)
	for i, file := range m.Files {
		var pipe, n int
		var ext string
		rest := strings.TrimPrefix(file.Path, "part-"+file.RunID+"-")
		if _, err := fmt.Sscanf(strings.Replace(rest, ".", " ", 1), "%03d-%04d %s", &pipe, &n, &ext); err != nil || rest == file.Path {
			t.Fatalf("unexpected data file name %s: %v", file.Path, err)
		}
		old := fmt.Sprintf("run=%s/part-%03d-%04d.%s", file.RunID, pipe, n, ext)
		f.Put(t, name+"/"+old, f.Get(t, scratch+"/"+file.Path))
		m.Files[i].Path = old
	}
	m.Table = name
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	f.Put(t, name+"/"+objstore.ManifestName, b)
}
