package postgres

import (
	"bytes"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

// benchColumns is the mixed 8-column table of the benchmarks (and of
// bench/pg_to_pg.sh): about 100 bytes of binary COPY a row.
func benchColumns() []routes.Column {
	natives := [][2]string{
		{"id", "bigint"}, {"qty", "integer"}, {"price", "numeric(12,2)"}, {"name", "text"},
		{"ts", "timestamp with time zone"}, {"flag", "boolean"}, {"score", "double precision"}, {"day", "date"},
	}
	cols := make([]routes.Column, len(natives))
	for i, n := range natives {
		typ, _ := arrowType(n[1])
		cols[i] = routes.Column{Name: n[0], Type: typ, NativeType: n[1], Nullable: true}
	}
	return cols
}

// benchStream encodes rows of benchColumns and returns the stream and the
// offsets where its tuples start (pgconn delivers one tuple a Write).
func benchStream(tb testing.TB, rows int) ([]byte, []int) {
	benchOnce.Do(func() { benchBytes, benchOffs = makeBenchStream(tb, rows) })
	return benchBytes, benchOffs
}

var (
	benchOnce  sync.Once
	benchBytes []byte
	benchOffs  []int
)

func makeBenchStream(tb testing.TB, rows int) ([]byte, []int) {
	cols := benchColumns()
	rb := array.NewRecordBuilder(memory.DefaultAllocator, (&routes.TableInfo{Columns: cols}).Schema())
	defer rb.Release()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	for i := range rows {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		rb.Field(1).(*array.Int32Builder).Append(int32(i % 1000))
		rb.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i) * 137))
		rb.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("customer-%08d-%06x", i, i*7919))
		rb.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(base + int64(i)*1000003))
		rb.Field(5).(*array.BooleanBuilder).Append(i%3 == 0)
		if i%10 == 0 {
			rb.Field(6).AppendNull()
		} else {
			rb.Field(6).(*array.Float64Builder).Append(float64(i) / 7)
		}
		rb.Field(7).(*array.Date32Builder).Append(arrow.Date32(19000 + i%3000))
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	enc := newEncoder(cols, &buf)
	if err := enc.WriteHeader(); err != nil {
		tb.Fatal(err)
	}
	if err := enc.Encode(rec); err != nil {
		tb.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes(), tupleOffsets(buf.Bytes())
}

func tupleOffsets(b []byte) []int {
	var offs []int
	for off := copyHeaderLen; off < len(b)-2; {
		offs = append(offs, off)
		p := off + 2
		for range int(be.Uint16(b[off:])) {
			p += 4 + max(int(int32(be.Uint32(b[p:]))), 0)
		}
		off = p
	}
	return offs
}

func BenchmarkDecode(b *testing.B) {
	stream, offs := benchStream(b, 200000)
	cols := benchColumns()
	writes := map[string]func(w *decoder){
		"row-writes": func(w *decoder) {
			w.Write(stream[:offs[0]])
			for i, off := range offs {
				end := len(stream)
				if i+1 < len(offs) {
					end = offs[i+1]
				}
				w.Write(stream[off:end])
			}
		},
		"64KiB-writes": func(w *decoder) {
			for p := stream; len(p) > 0; p = p[min(64<<10, len(p)):] {
				w.Write(p[:min(64<<10, len(p))])
			}
		},
	}
	for _, name := range []string{"row-writes", "64KiB-writes"} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			defer reportCPUThroughput(b, len(stream))()
			for b.Loop() {
				dec := newDecoder(cols, memory.DefaultAllocator, 4<<20, func(r arrow.RecordBatch) error { r.Release(); return nil })
				writes[name](dec)
				if err := dec.Close(); err != nil || dec.Rows() != int64(len(offs)) {
					b.Fatal(err, dec.Rows())
				}
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	stream, _ := benchStream(b, 200000)
	cols := benchColumns()
	var batches []arrow.RecordBatch
	dec := newDecoder(cols, memory.DefaultAllocator, 4<<20, func(r arrow.RecordBatch) error { batches = append(batches, r); return nil })
	dec.Write(stream)
	if err := dec.Close(); err != nil {
		b.Fatal(err)
	}
	defer releaseAll(batches)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	defer reportCPUThroughput(b, len(stream))()
	for b.Loop() {
		var n countBytes
		enc := newEncoder(cols, &n)
		enc.WriteHeader()
		for _, r := range batches {
			if err := enc.Encode(r); err != nil {
				b.Fatal(err)
			}
		}
		enc.Close()
		if int(n) != len(stream) {
			b.Fatalf("encoded %d bytes, want %d", n, len(stream))
		}
	}
}

type countBytes int

func (c *countBytes) Write(p []byte) (int, error) { *c += countBytes(len(p)); return len(p), nil }

// reportCPUThroughput adds an MB/cpu-s metric: stream bytes per second of
// process CPU time (GC included). On a shared, loaded machine wall-clock
// MB/s swings with the neighbours; CPU time does not.
func reportCPUThroughput(b *testing.B, bytesPerOp int) func() {
	start := processCPU()
	return func() {
		if cpu := processCPU() - start; cpu > 0 && b.N > 0 {
			b.ReportMetric(float64(bytesPerOp)*float64(b.N)/cpu.Seconds()/1e6, "MB/cpu-s")
		}
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
