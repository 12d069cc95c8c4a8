package iceberg_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/iceberg/icebergtest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestPostgresRoundTrip: PG → Iceberg → PG through routes.Copy, values equal.
func TestPostgresRoundTrip(t *testing.T) {
	pg, ice := postgrestest.New(t), icebergtest.New(t)
	ctx := testContext(t)
	pg.Create(t, ctx, "orig", routestest.Rows(1, 3000))
	run := func(srcURL, dstURL, src, dst string) {
		st, _ := routes.ParseTableRef(src)
		dt, _ := routes.ParseTableRef(dst)
		if _, err := copyURLs(ctx, srcURL, dstURL, routes.CopySpec{Table: st, DestTable: dt}); err != nil {
			t.Fatalf("%s → %s: %v", src, dst, err)
		}
	}
	run(pg.URL(), ice.URL(), pg.Ref("orig"), ice.Ref("lake"))
	run(ice.URL(), pg.URL(), ice.Ref("lake"), pg.Ref("back"))
	h1, n1 := pg.Hash(t, ctx, pg.Ref("orig"), "x.id")
	h2, n2 := pg.Hash(t, ctx, pg.Ref("back"), "x.id")
	if h1 != h2 || n1 != n2 {
		t.Fatalf("round trip differs: %d rows md5 %s → %d rows md5 %s", n1, h1, n2, h2)
	}
}

// pgTypes are the PostgreSQL types of the earlier issues and the Iceberg
// type each lands as.
var pgTypes = []struct{ pg, value, iceberg string }{
	{"smallint", "-32768", "int"},
	{"integer", "2147483647", "int"},
	{"bigint", "-9223372036854775808", "long"},
	{"oid", "4294967295", "long"},
	{"real", "1.5", "float"},
	{"double precision", "-2.25", "double"},
	{"numeric(12,2)", "-9999999999.99", "decimal(12, 2)"},
	{"numeric(38,10)", "1234567890123456789012345678.0123456789", "decimal(38, 10)"},
	{"numeric(50,5)", "123456789012345678901234567890123456789012345.12345", "string"},
	{"numeric", "3.14159", "string"},
	{"boolean", "true", "boolean"},
	{"text", "ünïcødé ✓", "string"},
	{"varchar(10)", "x", "string"},
	{"char(3)", "abc", "string"},
	{"bytea", `\xdeadbeef`, "binary"},
	{"date", "2024-02-29", "date"},
	{"time", "23:59:59.999999", "time"},
	{"timestamp", "2024-01-01 12:34:56.789012", "timestamp"},
	{"timestamptz", "2024-01-01 12:34:56.789012+00", "timestamptz"},
	{"interval", "1 year 2 mons 3 days 04:05:06.789012", "string"},
	{"uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "uuid"},
	{"json", `{"a": 1}`, "string"},
	{"jsonb", `{"a": 1}`, "string"},
	{"integer[]", "{1,NULL,3}", "list<int>"},
	{"text[]", `{a,"b c"}`, "list<string>"},
}

// TestPostgresTypes loads every type into Iceberg, checks the Iceberg type,
// and loads it back into PostgreSQL: the text of each value is unchanged
// (PostgreSQL reads the stored text of interval and wide numerics back).
func TestPostgresTypes(t *testing.T) {
	pg, ice := postgrestest.New(t), icebergtest.New(t)
	ctx := testContext(t)
	cols, vals := "id bigint PRIMARY KEY", "1"
	for i, c := range pgTypes {
		cols += fmt.Sprintf(", c%d %s", i, c.pg)
		vals += fmt.Sprintf(", '%s'", c.value)
	}
	pg.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (%s)", pg.Ref("types"), cols),
		fmt.Sprintf("INSERT INTO %s VALUES (%s), (2%s)", pg.Ref("types"), vals, nulls(len(pgTypes))))
	if _, err := copyURLs(ctx, pg.URL(), ice.URL(), routes.CopySpec{Table: ref(pg.Ref("types")), DestTable: ice.TableRef("types")}); err != nil {
		t.Fatal(err)
	}
	info, err := ice.Endpoint().Probe(ctx, ice.TableRef("types"))
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range pgTypes {
		if got := info.Columns[i+1].NativeType; got != c.iceberg {
			t.Errorf("%s: Iceberg type %s, want %s", c.pg, got, c.iceberg)
		}
	}
	if _, err := copyURLs(ctx, ice.URL(), pg.URL(), routes.CopySpec{Table: ice.TableRef("types"), DestTable: ref(pg.Ref("back"))}); err != nil {
		t.Fatal(err)
	}
	for i, c := range pgTypes {
		var a, b *string
		q := fmt.Sprintf("SELECT (SELECT c%[1]d::text FROM %[2]s WHERE id = %[4]d), (SELECT c%[1]d::%[3]s::text FROM %[5]s WHERE id = %[4]d)", i, pg.Ref("types"), c.pg, 1, pg.Ref("back"))
		if err := pg.Pool.QueryRow(ctx, q).Scan(&a, &b); err != nil {
			t.Fatalf("%s: %v", c.pg, err)
		}
		if a == nil || b == nil || *a != *b {
			t.Errorf("%s: %v came back as %v", c.pg, deref(a), deref(b))
		}
	}
}

func nulls(n int) string {
	s := ""
	for range n {
		s += ", NULL"
	}
	return s
}

func ref(s string) routes.TableRef {
	r, _ := routes.ParseTableRef(s)
	return r
}

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return *s
}

// TestAppend_NullIntoRequiredColumnFails: a source column that was NOT NULL
// when the table was created (a required Iceberg field) and later holds a
// NULL fails the append, naming the column; it used to land as 0 or "" (or
// whatever the null slot held), exit 0. The table keeps its rows.
func TestAppend_NullIntoRequiredColumnFails(t *testing.T) {
	pg, ice := postgrestest.New(t), icebergtest.New(t)
	ctx := testContext(t)
	pg.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %[1]s.rq (id int PRIMARY KEY, c bigint NOT NULL, s text NOT NULL, d date NOT NULL);
INSERT INTO %[1]s.rq VALUES (1, 10, 'a', '2024-01-01')`, pg.Schema))
	st, _ := routes.ParseTableRef(pg.Ref("rq"))
	dt, _ := routes.ParseTableRef(ice.Ref("rq"))
	spec := routes.CopySpec{Table: st, DestTable: dt, Mode: routes.ModeAppend}
	if _, err := copyURLs(ctx, pg.URL(), ice.URL(), spec); err != nil {
		t.Fatal(err)
	}
	for i, col := range []string{"c", "s", "d"} {
		pg.Exec(t, ctx, fmt.Sprintf(`ALTER TABLE %[1]s.rq ALTER %[2]s DROP NOT NULL;
INSERT INTO %[1]s.rq VALUES (%[3]d, 1, 'x', '2024-01-02'); UPDATE %[1]s.rq SET %[2]s = NULL WHERE id = %[3]d`, pg.Schema, col, i+2))
		_, err := copyURLs(ctx, pg.URL(), ice.URL(), spec)
		if err == nil || !strings.Contains(err.Error(), "column "+col+": required") || !errors.Is(err, routes.ErrBadInput) {
			t.Fatalf("NULL in %s: got %v, want an error naming the required column", col, err)
		}
		pg.Exec(t, ctx, fmt.Sprintf(`DELETE FROM %s.rq WHERE id = %d`, pg.Schema, i+2))
	}
	back, _ := routes.ParseTableRef(pg.Ref("back"))
	if _, err := copyURLs(ctx, ice.URL(), pg.URL(), routes.CopySpec{Table: dt, DestTable: back}); err != nil {
		t.Fatal(err)
	}
	if _, n := pg.Hash(t, ctx, pg.Ref("back"), "x.id"); n != 1 {
		t.Fatalf("the table holds %d rows after the refused appends, want its 1", n)
	}
}
