package mysql

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/routestest"
)

func cursorTable(t *testing.T, f *mysqltest.Fixture) {
	ctx := routestest.Context(t, time.Minute)
	f.Exec(t, ctx, `CREATE TABLE cur (id BIGINT UNSIGNED PRIMARY KEY, dt DATETIME, ts TIMESTAMP(3) NULL, d DATE, amount DECIMAL(10,2), s VARCHAR(10))`,
		`INSERT INTO cur VALUES
  (18446744073709551613, '2024-01-01 10:00:00', '2024-01-01 10:00:00.250', '2024-01-01', 1.50, 'a'),
  (18446744073709551614, '2024-01-02 10:00:00', '2024-01-02 10:00:00.500', '2024-01-02', 2.50, 'b'),
  (18446744073709551615, '2024-01-03 10:00:00', '2024-01-03 10:00:00.000', '2024-01-03', 3.50, 'c')`,
		`CREATE TABLE empty (id INT PRIMARY KEY)`)
}

func TestMaxCursor(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	f := mysqltest.New(t)
	cursorTable(t, f)
	e := openEndpoint(t, f, "")
	info, err := e.Probe(ctx, ref(f, "cur"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"id": "18446744073709551615", "dt": "2024-01-03 10:00:00.000000", "ts": "2024-01-03 10:00:00.000000",
		"d": "2024-01-03", "amount": "3.50", "s": "c",
	}
	for col, w := range want {
		got, ok, err := e.MaxCursor(ctx, info, col)
		if err != nil || !ok || got != w {
			t.Errorf("MaxCursor(%s) = %q, %v, %v; want %q", col, got, ok, err, w)
		}
	}
	empty, _ := e.Probe(ctx, ref(f, "empty"))
	if _, ok, err := e.MaxCursor(ctx, empty, "id"); ok || err != nil {
		t.Errorf("empty table: ok %v err %v", ok, err)
	}
	if _, _, err := e.MaxCursor(ctx, info, "nope"); err == nil {
		t.Error("missing cursor column accepted")
	}
}

// TestRead_CursorBounds: After is exclusive, Until inclusive, on every
// kind of cursor; the unsigned key compares exactly above 2^63.
func TestRead_CursorBounds(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	f := mysqltest.New(t)
	cursorTable(t, f)
	e := openEndpoint(t, f, "")
	tests := []struct{ cursor, after, until, want string }{
		{"id", "18446744073709551613", "18446744073709551614", "[b]"},
		{"id", "18446744073709551613", "", "[b c]"},
		{"dt", "2024-01-01 10:00:00.000000", "2024-01-03 10:00:00.000000", "[b c]"},
		{"ts", "2024-01-01 10:00:00.25", "2024-01-02 10:00:00.5", "[b]"},
		{"d", "", "2024-01-02", "[a b]"},
		{"amount", "1.5", "3.49", "[b]"},
		{"s", "a", "b", "[b]"},
	}
	for _, tt := range tests {
		var got []string
		err := forEachBatch(t, ctx, e, ref(f, "cur"), routes.ReadOptions{Columns: []string{"s"}, Cursor: tt.cursor, After: tt.after, Until: tt.until},
			func(b arrow.RecordBatch) {
				col := b.Column(0).(*array.String)
				for i := range col.Len() {
					got = append(got, col.Value(i))
				}
			})
		if err != nil || fmt.Sprint(got) != tt.want {
			t.Errorf("%s in (%s, %s]: got %v, %v; want %s", tt.cursor, tt.after, tt.until, got, err, tt.want)
		}
	}
	info, _ := e.Probe(ctx, ref(f, "cur"))
	if _, err := e.Read(ctx, routes.Range{Table: info}, routes.ReadOptions{Cursor: "id", After: "1 OR 1=1"}); err == nil {
		t.Error("a non-numeric watermark on an integer cursor was inlined")
	}
}

func TestListTables(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	f := mysqltest.New(t)
	f.Exec(t, ctx, "CREATE TABLE b (id INT)", "CREATE TABLE a (id INT)", "CREATE VIEW v AS SELECT * FROM a",
		"CREATE TABLE _weir_state (x INT)", "CREATE TABLE _weir_stage_a_12345678 (x INT)")
	got, err := openEndpoint(t, f, "").ListTables(ctx, f.Database)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("[%[1]s.a %[1]s.b]", f.Database); fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
}
