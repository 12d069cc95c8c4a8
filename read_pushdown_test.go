package weir_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/clickhouse/clickhousetest"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
	"github.com/weirhq/weir/routes/where"
)

// TestRead_PushdownReadsOnlyMatchingRows: on a big table (2M rows in
// PostgreSQL, 200k in MySQL and ClickHouse) a filtered read receives from
// the server only the rows the filter keeps — counted as the source's
// streams decode them, before the client applies the filter again — and
// returns exactly those.
func TestRead_PushdownReadsOnlyMatchingRows(t *testing.T) {
	type table struct {
		name string
		n    int
		yes  string // flag's true: ClickHouse before 21.12 has no Bool
		url  func(t *testing.T) (url, ref string)
	}
	tables := []table{
		{"postgres", 2_000_000, "TRUE", func(t *testing.T) (string, string) {
			f := postgrestest.New(t)
			f.Exec(t, routestest.Context(t, time.Minute),
				"CREATE UNLOGGED TABLE "+f.Ref("big")+" (id bigint PRIMARY KEY, amount numeric(12,2), name text, flag boolean)",
				"INSERT INTO "+f.Ref("big")+" SELECT g, g/100.0, 'n'||g, g%2=0 FROM generate_series(1, 2000000) g")
			return f.URL(), f.Ref("big")
		}},
		{"mysql", 200_000, "TRUE", func(t *testing.T) (string, string) {
			f := mysqltest.New(t)
			f.Exec(t, routestest.Context(t, time.Minute),
				"CREATE TABLE "+f.Ref("big")+" (id bigint PRIMARY KEY, amount decimal(12,2), name varchar(20), flag tinyint(1))",
				"INSERT INTO "+f.Ref("big")+" SELECT seq, seq/100, concat('n', seq), seq%2=0 FROM seq_1_to_200000")
			return f.URL(), f.Ref("big")
		}},
		{"clickhouse", 200_000, "1", func(t *testing.T) (string, string) {
			f := clickhousetest.New(t)
			f.Exec(t, routestest.Context(t, time.Minute),
				"CREATE TABLE "+f.Ref("big")+" (id Int64, amount Decimal(12,2), name String, flag UInt8) ENGINE = MergeTree ORDER BY id",
				"INSERT INTO "+f.Ref("big")+" SELECT number+1, toDecimal64((number+1)/100, 2), concat('n', toString(number+1)), (number+1)%2=0 FROM numbers(200000)")
			return f.URL(), f.Ref("big")
		}},
	}
	for _, tb := range tables {
		t.Run(tb.name, func(t *testing.T) {
			u, ref := tb.url(t)
			counted.target = u
			n := tb.n
			filters := []struct {
				where string
				want  int64
			}{
				{fmt.Sprintf("id > %d", n-10), 10},
				{fmt.Sprintf("(id <= 5 OR id > %d) AND flag = %s", n-4, tb.yes), 4},
				{"name = 'n77'", 1},
				{"amount < 1", 99},
				{"id < 0 OR name IS NULL", 0},
			}
			for _, f := range filters {
				start := time.Now()
				counted.rows.Store(0)
				ctx := routestest.Context(t, time.Minute)
				rr, err := weir.Read(ctx, "countread://x", ref, weir.ReadOptions{Columns: []string{"id"}, Where: f.where})
				if err != nil {
					t.Fatal(err)
				}
				var got int64
				for rr.Next() {
					got += rr.RecordBatch().NumRows()
				}
				err = rr.Err()
				rr.Release()
				if err != nil {
					t.Fatal(err)
				}
				if read := counted.rows.Load(); got != f.want || read != f.want {
					t.Errorf("%s: returned %d rows, the source read %d; want %d (of %d)", f.where, got, read, f.want, n)
				}
				t.Logf("%s: %d rows in %s", f.where, got, time.Since(start))
			}
		})
	}
}

// counted is where countread:// reads, and how many rows its streams
// decoded.
var counted struct {
	target string
	rows   atomic.Int64
}

// countingSource wraps a source, forwarding its pushdown, and counts the
// rows its streams deliver.
type countingSource struct{ routes.Source }

type countingStream struct{ routes.Stream }

func (s countingStream) Next() bool {
	ok := s.Stream.Next()
	if ok {
		counted.rows.Add(s.RecordBatch().NumRows())
	}
	return ok
}

func (c countingSource) Read(ctx context.Context, r routes.Range, opts routes.ReadOptions) (routes.Stream, error) {
	s, err := c.Source.Read(ctx, r, opts)
	if err != nil {
		return nil, err
	}
	return countingStream{s}, nil
}

func (c countingSource) PushDown(e where.Expr, schema *arrow.Schema) string {
	if pd, ok := c.Source.(where.Pushdown); ok {
		return pd.PushDown(e, schema)
	}
	return ""
}

func (c countingSource) ReadWhere(ctx context.Context, r routes.Range, opts routes.ReadOptions, e where.Expr) (routes.Stream, error) {
	s, err := c.Source.(where.Pushdown).ReadWhere(ctx, r, opts, e)
	if err != nil {
		return nil, err
	}
	return countingStream{s}, nil
}

func init() {
	routes.Register("countread", func(ctx context.Context, u *routes.URL) (routes.Endpoint, error) {
		s, err := routes.OpenSource(ctx, counted.target)
		return countingSource{s}, err
	})
}
