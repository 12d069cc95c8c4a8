package clickhouse

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/ch-go"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/clickhouse/clickhousetest"
	"github.com/weirhq/weir/routes/routestest"
)

func openEndpoint(t *testing.T, ctx context.Context, url string) *Endpoint {
	t.Helper()
	d, err := routes.OpenDestination(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d.(*Endpoint)
}

func TestNegotiate(t *testing.T) {
	f := clickhousetest.New(t)
	ctx := routestest.Context(t, time.Minute)
	e := openEndpoint(t, ctx, f.URL())
	want := 0
	if e.feat.major < 19 || (e.feat.major == 19 && e.feat.minor < 17) {
		want = legacyProtocol // 18.16 is revision 54412
	}
	if e.Protocol() != want {
		t.Fatalf("server %s: protocol %d, want %d", e.Version(), e.Protocol(), want)
	}
	if negotiate(54412) != legacyProtocol || negotiate(54420) != 0 || negotiate(54477) != 0 {
		t.Fatal("negotiate picks the wrong protocol")
	}
}

func TestNativeCompression(t *testing.T) {
	tests := []struct {
		setting, host string
		want          ch.Compression
	}{
		{"auto", "127.0.0.1", ch.CompressionDisabled},
		{"auto", "::1", ch.CompressionDisabled},
		{"auto", "LocalHost", ch.CompressionDisabled},
		{"auto", "10.0.0.7", ch.CompressionLZ4},
		{"auto", "ch.example.internal", ch.CompressionLZ4},
		{"lz4", "127.0.0.1", ch.CompressionLZ4},
		{"none", "10.0.0.7", ch.CompressionDisabled},
	}
	for _, tc := range tests {
		if got := nativeCompression(tc.setting, tc.host); got != tc.want {
			t.Errorf("nativeCompression(%q, %q) = %v, want %v", tc.setting, tc.host, got, tc.want)
		}
	}
}

// TestNativeInsert_Compression round-trips blocks over the real server both
// compressed (the path of remote hosts) and not (loopback's default, whose
// columns go out by vectored write without a copy).
func TestNativeInsert_Compression(t *testing.T) {
	for _, c := range []string{"lz4", "none"} {
		t.Run(c, func(t *testing.T) {
			f := clickhousetest.New(t)
			ctx := routestest.Context(t, time.Minute)
			e := openEndpoint(t, ctx, f.URLWith("compression="+c))
			f.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id Int64, s String) ENGINE = MergeTree ORDER BY id", f.Ref("z")))
			encs := []encoder{mustEncoder(t, arrow.PrimitiveTypes.Int64, "Int64"), mustEncoder(t, arrow.BinaryTypes.String, "String")}
			n, err := e.conn.insert(ctx, ident(routes.TableRef{Schema: f.DB, Name: "z"}), []string{"id", "s"}, encs, randomBatches(memory.DefaultAllocator, 3, 5000))
			if err != nil || n != 15_000 {
				t.Fatalf("inserted %d: %v", n, err)
			}
			// ids 0..n-1, each string 32 random bytes in hex
			got := f.Value(t, ctx, "SELECT toString(count()) || ' ' || toString(sum(id)) || ' ' || toString(min(length(s))) || ' ' || toString(max(length(s))) FROM "+f.Ref("z"))
			if want := fmt.Sprintf("%d %d 64 64", n, n*(n-1)/2); got != want {
				t.Fatalf("count, sum(id), string lengths: %q, want %q", got, want)
			}
			if rows := countRead(t, ctx, e, routes.TableRef{Schema: f.DB, Name: "z"}); rows != n {
				t.Fatalf("read back %d rows, want %d", rows, n)
			}
		})
	}
}

// countRead reads a whole table through the endpoint's source side.
func countRead(t *testing.T, ctx context.Context, e *Endpoint, ref routes.TableRef) int64 {
	t.Helper()
	info, err := e.Probe(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	ranges, err := e.Plan(ctx, info, routes.PlanOptions{Pipes: 1})
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, r := range ranges {
		s, err := e.Read(ctx, r, routes.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for s.Next() {
			rows += s.RecordBatch().NumRows()
		}
		err = s.Err()
		s.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	return rows
}

// dieWithoutCleanup stops a run's heartbeat and nothing else, the way a
// killed process leaves it: lock and staging tables stay.
func dieWithoutCleanup(st *stage) {
	st.lease.cancel()
	<-st.lease.done
	st.lease.cancel = nil
	st.done = true
}

func TestPrepare_KilledRunExpires(t *testing.T) {
	f := clickhousetest.New(t)
	ctx := routestest.Context(t, time.Minute)
	f.Create(t, ctx, "src", routestest.Rows(1, 10))
	e := openEndpoint(t, ctx, f.URLWith("lease=2s"))
	info, err := e.Probe(ctx, routes.TableRef{Schema: f.DB, Name: "src"})
	if err != nil {
		t.Fatal(err)
	}
	opts := routes.WriteOptions{Table: routes.TableRef{Schema: f.DB, Name: "dst"}, Mode: routes.ModeReplace, RunID: "dead0001"}
	st, err := e.Prepare(ctx, info, opts)
	if err != nil {
		t.Fatal(err)
	}
	dieWithoutCleanup(st.(*stage))
	opts.RunID = "next0001"
	var lerr *routes.LockedError
	if _, err := e.Prepare(ctx, info, opts); !errors.As(err, &lerr) || lerr.RunID != "dead0001" {
		t.Fatalf("prepare within the lease: %v, want locked by dead0001", err)
	}
	time.Sleep(3500 * time.Millisecond)
	next, err := e.Prepare(ctx, info, opts)
	if err != nil {
		t.Fatalf("prepare after the lease expired: %v", err)
	}
	left := f.Staging(t, ctx, "dst")
	if len(left) != 2 || !contains(left, "_weir_stage_dst_next0001") || !contains(left, "_weir_lock_dst") {
		t.Fatalf("tables for dst: %v, want the new run's stage and lock only", left)
	}
	if err := next.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if left := f.Staging(t, ctx, "dst"); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestCommit_CrashBetweenDataAndState kills an append run after its
// applying record, with and without its data landed: the state read back
// follows the data, and the next run neither loses nor repeats rows.
func TestCommit_CrashBetweenDataAndState(t *testing.T) {
	for _, landed := range []bool{false, true} {
		t.Run(fmt.Sprintf("landed=%v", landed), func(t *testing.T) {
			f := clickhousetest.New(t)
			ctx := routestest.Context(t, time.Minute)
			f.Create(t, ctx, "src", routestest.Rows(1, 10))
			url := f.URLWith("lease=1s")
			appendRun(t, ctx, url, f.DB)
			f.Insert(t, ctx, "src", routestest.Rows(11, 20))
			info := crashedAppend(t, ctx, openEndpoint(t, ctx, url), f.DB, landed)
			time.Sleep(2500 * time.Millisecond) // the dead run's lease expires
			e := openEndpoint(t, ctx, url)
			s, ok, err := e.LoadState(ctx, routes.TableRef{Schema: f.DB, Name: "dst"}, info.SourceID)
			want := map[bool]string{false: "10", true: "20"}[landed]
			if err != nil || !ok || s.Watermark != want {
				t.Fatalf("state after the crash: %+v %v %v, want watermark %s", s, ok, err, want)
			}
			appendRun(t, ctx, url, f.DB) // landed: nothing new, so nothing to prepare either
			f.Insert(t, ctx, "src", routestest.Rows(21, 25))
			appendRun(t, ctx, url, f.DB) // settles the dead run and drops its leftovers
			rows, _ := f.Read(t, ctx, "dst")
			if len(rows) != 25 || rows[24].ID != 25 || rows[10].ID != 11 {
				t.Fatalf("after the next runs: %d rows, want ids 1..25 once", len(rows))
			}
			if left := f.Staging(t, ctx, "dst"); len(left) != 0 {
				t.Fatalf("left behind: %v", left)
			}
		})
	}
}

func appendRun(t *testing.T, ctx context.Context, url, db string) {
	t.Helper()
	e := openEndpoint(t, ctx, url)
	spec := routes.CopySpec{Table: routes.TableRef{Schema: db, Name: "src"}, DestTable: routes.TableRef{Schema: db, Name: "dst"},
		Mode: routes.ModeAppend}
	if _, _, err := incremental.Copy(ctx, e, e, spec, ""); err != nil {
		t.Fatal(err)
	}
}

// crashedAppend stages ids 11..20, writes the applying record, lands the
// rows or not, and dies.
func crashedAppend(t *testing.T, ctx context.Context, e *Endpoint, db string, land bool) *routes.TableInfo {
	t.Helper()
	info, err := e.Probe(ctx, routes.TableRef{Schema: db, Name: "src"})
	if err != nil {
		t.Fatal(err)
	}
	st0, err := e.Prepare(ctx, info, routes.WriteOptions{Table: routes.TableRef{Schema: db, Name: "dst"}, Mode: routes.ModeAppend, RunID: "dead0001"})
	if err != nil {
		t.Fatal(err)
	}
	st := st0.(*stage)
	s, err := e.Read(ctx, routes.Range{Table: info, Predicate: "1", Count: 1}, routes.ReadOptions{Cursor: "id", After: "10", Until: "20"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	if n, err := st.Write(ctx, s); err != nil || n != 10 {
		t.Fatalf("staged %d rows: %v", n, err)
	}
	rec, err := st.begin(ctx, routes.State{SourceID: info.SourceID, Cursor: "id", Watermark: "20", RunID: "dead0001", Rows: 10})
	if err != nil {
		t.Fatal(err)
	}
	if land {
		if err := st.land(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	dieWithoutCleanup(st)
	return info
}

// countingTransport counts HTTP requests.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func TestHTTPInsert_SplitsAtBodyCap(t *testing.T) {
	for _, format := range []string{"RowBinary", "Native"} {
		t.Run(format, func(t *testing.T) {
			f := clickhousetest.NewHTTP(t)
			ctx := routestest.Context(t, time.Minute)
			e := openEndpoint(t, ctx, f.URLWith("max_body_bytes=400000&http_format="+format))
			ct := &countingTransport{}
			e.http.client.Transport = ct
			f.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id Int64, s String) ENGINE = MergeTree ORDER BY id", f.Ref("split")))
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			next := randomBatches(mem, 10, 10_000)
			encs := []encoder{mustEncoder(t, arrow.PrimitiveTypes.Int64, "Int64"), mustEncoder(t, arrow.BinaryTypes.String, "String")}
			n, err := e.conn.insert(ctx, ident(routes.TableRef{Schema: f.DB, Name: "split"}), []string{"id", "s"}, encs, next)
			if err != nil || n != 100_000 {
				t.Fatalf("inserted %d: %v", n, err)
			}
			if got := f.Value(t, ctx, "SELECT concat(toString(count()), '/', toString(uniqExact(id))) FROM "+f.Ref("split")); got != "100000/100000" {
				t.Fatalf("table holds %s rows/ids, want 100000/100000", got)
			}
			if ct.n.Load() < 4 {
				t.Fatalf("%d requests for ~3 MB of gzip'd hex under a 400 kB cap", ct.n.Load())
			}
		})
	}
}

func mustEncoder(t *testing.T, a arrow.DataType, typ string) encoder {
	enc, err := newEncoder(a, typ, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// randomBatches yields n batches of rows (id, 64 random hex characters).
func randomBatches(mem memory.Allocator, n, rows int) batchSource {
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	i := 0
	return func() (arrow.RecordBatch, error) {
		if i == n {
			return nil, io.EOF
		}
		b := array.NewRecordBuilder(mem, schema)
		defer b.Release()
		buf := make([]byte, 32)
		for r := 0; r < rows; r++ {
			rand.Read(buf)
			b.Field(0).(*array.Int64Builder).Append(int64(i*rows + r))
			b.Field(1).(*array.StringBuilder).Append(hex.EncodeToString(buf))
		}
		i++
		return b.NewRecordBatch(), nil
	}
}

// TestNativeInsert_ReleasesBatches loads through the native protocol with
// a checked allocator: every batch the insert takes is released.
func TestNativeInsert_ReleasesBatches(t *testing.T) {
	f := clickhousetest.New(t)
	ctx := routestest.Context(t, time.Minute)
	e := openEndpoint(t, ctx, f.URL())
	f.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id Int64, s String) ENGINE = MergeTree ORDER BY id", f.Ref("mem")))
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	encs := []encoder{mustEncoder(t, arrow.PrimitiveTypes.Int64, "Int64"), mustEncoder(t, arrow.BinaryTypes.String, "String")}
	n, err := e.conn.insert(ctx, ident(routes.TableRef{Schema: f.DB, Name: "mem"}), []string{"id", "s"}, encs, randomBatches(mem, 5, 2000))
	if err != nil || n != 10_000 || f.Value(t, ctx, "SELECT toString(count()) FROM "+f.Ref("mem")) != "10000" {
		t.Fatalf("inserted %d: %v", n, err)
	}
}

// TestCommit_RepeatedMergeKey: a merge whose staged rows repeat a key is
// refused before anything lands, naming a repeated key; when a background
// merge of the ReplacingMergeTree staging table already collapsed the
// copies (forced here by OPTIMIZE … FINAL), fewer rows staged than written
// still refuse it, without a key to name. The destination is not created.
func TestCommit_RepeatedMergeKey(t *testing.T) {
	for _, collapsed := range []bool{false, true} {
		t.Run(fmt.Sprintf("collapsed %v", collapsed), func(t *testing.T) {
			f := clickhousetest.New(t)
			ctx := routestest.Context(t, time.Minute)
			f.Create(t, ctx, "src", routestest.Rows(1, 10))
			e := openEndpoint(t, ctx, f.URL())
			info, err := e.Probe(ctx, routes.TableRef{Schema: f.DB, Name: "src"})
			if err != nil {
				t.Fatal(err)
			}
			st0, err := e.Prepare(ctx, info, routes.WriteOptions{Table: routes.TableRef{Schema: f.DB, Name: "dst"}, Mode: routes.ModeMerge, Key: []string{"id"}, RunID: "merge001"})
			if err != nil {
				t.Fatal(err)
			}
			st := st0.(*stage)
			defer st.Abort(context.WithoutCancel(ctx))
			var written int64
			for range 2 { // every key twice
				s, err := e.Read(ctx, routes.Range{Table: info, Predicate: "1", Count: 1}, routes.ReadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				n, err := st.Write(ctx, s)
				s.Release()
				if err != nil {
					t.Fatal(err)
				}
				written += n
			}
			if collapsed {
				f.Exec(t, ctx, "OPTIMIZE TABLE "+ident(st.table)+" FINAL")
				if n := countRead(t, ctx, e, st.table); n != 10 {
					t.Fatalf("OPTIMIZE FINAL left %d staged rows, want 10", n)
				}
			}
			err = st.Commit(ctx, routes.State{SourceID: info.SourceID, RunID: "merge001", Rows: written})
			var pe *routes.ProbeError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), "more than one row with") {
				t.Fatalf("commit of a repeated key: %v, want bad input", err)
			}
			if named := strings.Contains(err.Error(), "key (id) = ("); named == collapsed {
				t.Errorf("collapsed=%v: the refusal names a key: %v (%q)", collapsed, named, err)
			}
			if ok, err := e.tableExists(ctx, routes.TableRef{Schema: f.DB, Name: "dst"}); err != nil || ok {
				t.Fatalf("the refused merge created dst: %v %v", ok, err)
			}
		})
	}
}
