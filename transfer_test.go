package weir_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/clickhouse/clickhousetest"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestTransfer_SchemaOneBadTable: --schema moves every table; one that fails
// (its destination name is taken by a view) never stops the others, and the
// report lists each table.
func TestTransfer_SchemaOneBadTable(t *testing.T) {
	src, dst := postgrestest.New(t), postgrestest.New(t)
	ctx := routestest.Context(t, 2*time.Minute)
	for _, name := range []string{"a", "b", "c"} {
		src.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %s.%s AS SELECT g::int8 AS id FROM generate_series(1, 1000) g`, src.Schema, name))
	}
	dst.Exec(t, ctx, fmt.Sprintf(`CREATE VIEW %s.b AS SELECT 1 AS id`, dst.Schema))
	rep, err := weir.Transfer(ctx, src.URL(), dst.URL(), weir.TransferOptions{Schema: src.Schema, DestSchema: dst.Schema})
	if err == nil || !strings.Contains(err.Error(), src.Schema+".b") {
		t.Fatalf("want table b's error, got %v", err)
	}
	if len(rep.Tables) != 3 || rep.Rows != 2000 {
		t.Fatalf("report: %d tables, %d rows; want 3 tables, 2000 rows", len(rep.Tables), rep.Rows)
	}
	for _, tr := range rep.Tables {
		failed := tr.Error != ""
		if failed != strings.HasSuffix(tr.Table, ".b") {
			t.Errorf("table %s: error %q", tr.Table, tr.Error)
		}
	}
	for _, name := range []string{"a", "c"} {
		if _, n := dst.Hash(t, ctx, dst.Ref(name), "x.id"); n != 1000 {
			t.Errorf("%s landed %d rows, want 1000", name, n)
		}
	}
}

// TestTransfer_MergeByUpdatedAt: MySQL → Postgres merge on a timestamp
// cursor updates changed rows and inserts new ones; a replay is a no-op.
func TestTransfer_MergeByUpdatedAt(t *testing.T) {
	my, pg := mysqltest.New(t), postgrestest.New(t)
	ctx := routestest.Context(t, 2*time.Minute)
	my.Exec(t, ctx, `CREATE TABLE orders (id BIGINT PRIMARY KEY, status VARCHAR(20) NOT NULL, amount DECIMAL(12,2), updated_at DATETIME(6) NOT NULL)`,
		`INSERT INTO orders VALUES (1, 'new', 10.50, '2026-01-01 00:00:00'), (2, 'new', 20.00, '2026-01-01 00:00:01'), (3, 'new', NULL, '2026-01-01 00:00:02')`)
	opts := weir.TransferOptions{Tables: []string{my.Ref("orders")}, DestTable: pg.Ref("orders"), Mode: "merge", Cursor: "updated_at"}
	merge := func() *weir.Report {
		t.Helper()
		rep, err := weir.Transfer(ctx, my.URL(), pg.URL(), opts)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	merge()
	my.Exec(t, ctx, `UPDATE orders SET status = 'paid', updated_at = '2026-01-02 00:00:00.5' WHERE id = 2`,
		`INSERT INTO orders VALUES (4, 'new', 1.25, '2026-01-02 00:00:01')`)
	if rep := merge(); rep.Rows != 2 {
		t.Fatalf("second merge moved %d rows, want the 2 changed", rep.Rows)
	}
	if rep := merge(); !rep.Tables[0].NothingNew {
		t.Fatalf("replay moved rows: %+v", rep.Tables[0])
	}
	var got []string
	rows, err := pg.Pool.Query(ctx, fmt.Sprintf(`SELECT id || ':' || status || ':' || coalesce(amount::text, 'NULL') FROM %s ORDER BY id`, pg.Ref("orders")))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		rows.Scan(&s)
		got = append(got, s)
	}
	want := "1:new:10.50 2:paid:20.00 3:new:NULL 4:new:1.25"
	if strings.Join(got, " ") != want {
		t.Fatalf("merged rows %v, want %s", got, want)
	}
}

// TestTransfer_AppendThreeRunsMySQL: append picks up exactly the new rows.
func TestTransfer_AppendThreeRunsMySQL(t *testing.T) {
	my, pg := mysqltest.New(t), postgrestest.New(t)
	ctx := routestest.Context(t, 2*time.Minute)
	my.Exec(t, ctx, `CREATE TABLE ev (id BIGINT UNSIGNED PRIMARY KEY, v VARCHAR(10))`)
	opts := weir.TransferOptions{Tables: []string{my.Ref("ev")}, DestTable: pg.Ref("ev"), Mode: "append"}
	for run := 1; run <= 3; run++ {
		my.Exec(t, ctx, fmt.Sprintf(`INSERT INTO ev VALUES (%d, 'a'), (%d, 'b')`, run*10, run*10+1))
		rep, err := weir.Transfer(ctx, my.URL(), pg.URL(), opts)
		if err != nil || rep.Rows != 2 {
			t.Fatalf("run %d: %d rows, %v; want 2 new rows", run, rep.Rows, err)
		}
	}
	if _, n := pg.Hash(t, ctx, pg.Ref("ev"), "x.id"); n != 6 {
		t.Fatalf("destination has %d rows, want 6", n)
	}
}

// TestTransfer_DroppedDestinationStartsOver: a destination table dropped by
// hand while its _weir_state row stays is loaded again from the start by the
// next append or merge, not recreated with only the rows past the saved
// watermark (it landed 1 row of 11, exit 0).
func TestTransfer_DroppedDestinationStartsOver(t *testing.T) {
	src, pg, my, ch := postgrestest.New(t), postgrestest.New(t), mysqltest.New(t), clickhousetest.New(t)
	ctx := routestest.Context(t, 3*time.Minute)
	dsts := []struct {
		name string
		fx   routestest.Fixture
		drop func(table string)
	}{
		{"postgres", pg, func(table string) { pg.Exec(t, ctx, "DROP TABLE "+pg.Ref(table)) }},
		{"mysql", my, func(table string) { my.Exec(t, ctx, "DROP TABLE "+my.Ref(table)) }},
		{"clickhouse", ch, func(table string) { ch.Exec(t, ctx, "DROP TABLE "+ch.Ref(table)) }},
	}
	for _, mode := range []string{"append", "merge"} {
		for _, d := range dsts {
			t.Run(d.name+"/"+mode, func(t *testing.T) {
				name := "t_" + mode
				src.Create(t, ctx, name+"_"+d.name, routestest.Rows(1, 10))
				opts := weir.TransferOptions{Tables: []string{src.Ref(name + "_" + d.name)}, DestTable: d.fx.Ref(name), Mode: routes.Mode(mode)}
				if _, err := weir.Transfer(ctx, src.URL(), d.fx.URL(), opts); err != nil {
					t.Fatal(err)
				}
				d.drop(name)
				src.Insert(t, ctx, name+"_"+d.name, routestest.Rows(11, 11))
				if _, err := weir.Transfer(ctx, src.URL(), d.fx.URL(), opts); err != nil {
					t.Fatal(err)
				}
				if got, _ := d.fx.Read(t, ctx, name); len(got) != 11 {
					t.Fatalf("after the drop the table holds %d rows, want all 11", len(got))
				}
			})
		}
	}
}
