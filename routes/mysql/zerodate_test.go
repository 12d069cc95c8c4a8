package mysql

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/routestest"
)

// zeroDates makes a table holding MySQL's zero dates, which a permissive
// sql_mode lets in.
func zeroDates(t *testing.T, f *mysqltest.Fixture) {
	ctx := routestest.Context(t, time.Minute)
	conn, err := f.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{
		"SET SESSION sql_mode = ''",
		"CREATE TABLE zd (id INT PRIMARY KEY, d DATE, dt DATETIME)",
		"INSERT INTO zd VALUES (1, '2024-05-06', '2024-05-06 07:08:09'), (2, '0000-00-00', '0000-00-00 00:00:00'), (3, '2024-00-10', NULL)",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func TestRead_ZeroDatesRejected(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	f := mysqltest.New(t)
	zeroDates(t, f)
	err := forEachBatch(t, ctx, openEndpoint(t, f, ""), ref(f, "zd"), routes.ReadOptions{}, func(arrow.RecordBatch) {})
	var pe *routes.ProbeError
	if !errors.As(err, &pe) || !errors.Is(err, routes.ErrBadInput) {
		t.Fatalf("got %v, want a ProbeError (bad input)", err)
	}
	if pe.Table != f.Database+".zd" || pe.Column != "d" || !strings.Contains(pe.Hint, "zero_dates=null") {
		t.Errorf("error does not name table, column and fix: %v", err)
	}
	t.Log(err)
}

func TestRead_ZeroDatesAsNull(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	f := mysqltest.New(t)
	zeroDates(t, f)
	got := readAll(t, ctx, openEndpoint(t, f, "zero_dates=null"), ref(f, "zd"), 1<<20)
	want := map[string][3]string{
		"d":  {"2024-05-06", "NULL", "NULL"},
		"dt": {"2024-05-06 07:08:09.000000", "NULL", "NULL"},
	}
	for col, w := range want {
		if got[col] != w {
			t.Errorf("%s: got %q, want %q", col, got[col], w)
		}
	}
}

func TestRead_Tinyint1(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	f := mysqltest.New(t)
	f.Exec(t, ctx, "CREATE TABLE tb (id INT PRIMARY KEY, b TINYINT(1))", "INSERT INTO tb VALUES (1, 1), (2, 0), (3, 7)")
	err := forEachBatch(t, ctx, openEndpoint(t, f, ""), ref(f, "tb"), routes.ReadOptions{}, func(arrow.RecordBatch) {})
	var pe *routes.ProbeError
	if !errors.As(err, &pe) || pe.Column != "b" || !strings.Contains(pe.Hint, "tinyint1=int") {
		t.Fatalf("tinyint(1) holding 7: got %v, want a ProbeError with the tinyint1=int hint", err)
	}
	got := readAll(t, ctx, openEndpoint(t, f, "tinyint1=int"), ref(f, "tb"), 1<<20)["b"]
	if want := [3]string{"1", "0", "7"}; got != want {
		t.Errorf("tinyint1=int: got %q, want %q", got, want)
	}
}

// TestRead_ChunksAndBlobs: batches flush at ChunkBytes, big blobs stream
// through, the Counter counts, and every buffer is released.
func TestRead_ChunksAndBlobs(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	f := mysqltest.New(t)
	f.Exec(t, ctx, "CREATE TABLE big (id INT PRIMARY KEY, b LONGBLOB)",
		"INSERT INTO big SELECT seq, REPEAT(CHAR(seq MOD 256), 1 << 20) FROM seq_1_to_12")
	e := openEndpoint(t, f, "")
	info, err := e.Probe(ctx, ref(f, "big"))
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s, err := e.Read(ctx, routes.Range{Table: info, Predicate: "TRUE"}, routes.ReadOptions{Allocator: mem, ChunkBytes: 3 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	var batches, rows int64
	for s.Next() {
		batches++
		rows += s.RecordBatch().NumRows()
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	c := s.(routes.Counter)
	if batches != 4 || rows != 12 || c.Rows() != 12 || c.Bytes() < 12<<20 {
		t.Errorf("batches %d rows %d counted rows %d bytes %d; want 4 batches of 3 rows, 12 MiB", batches, rows, c.Rows(), c.Bytes())
	}
}
