package weir_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestPostgresToPostgres_ColumnTypes is the list README.md and
// docs/routes-postgres.md give: PostgreSQL → PostgreSQL keeps the types
// the codec reads (and one-dimensional arrays of them; a domain lands as
// its base type); every other type lands as text (arrays of them as
// text[]), holding the value's text form.
func TestPostgresToPostgres_ColumnTypes(t *testing.T) {
	kept := []string{"boolean", "smallint", "integer", "bigint", "oid", "real", "double precision", "numeric", "numeric(12,4)",
		"text", "character varying(20)", "character(3)", `"char"`, "name", "json", "jsonb", "bytea", "uuid", "date",
		"time without time zone", "timestamp without time zone", "timestamp with time zone", "interval",
		"integer[]", "text[]", "numeric(5,2)[]"}
	asText := []string{"mood", "pair", "int4range", "tstzrange", "inet", "cidr", "macaddr", "money", "xml", "point", "box",
		"bit(3)", "tsvector", "time with time zone"}
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "postgres")
	src.Exec(t, ctx, "CREATE TYPE "+src.Schema+".mood AS ENUM ('ok', 'sad')")
	src.Exec(t, ctx, "CREATE TYPE "+src.Schema+".pair AS (a int, b text)")
	src.Exec(t, ctx, "CREATE DOMAIN "+src.Schema+".posint AS integer CHECK (VALUE > 0)")
	want := map[string]string{}
	defs := []string{"id bigint PRIMARY KEY"}
	add := func(typ, dest string) {
		col := fmt.Sprintf("c%d", len(defs))
		ddl := typ
		if typ == "mood" || typ == "pair" || typ == "posint" {
			ddl = src.Schema + "." + typ
		}
		defs = append(defs, col+" "+ddl)
		want[col] = dest
	}
	for _, typ := range kept {
		add(typ, typ)
	}
	for _, typ := range asText {
		add(typ, "text")
	}
	add("inet[]", "text[]")
	add("posint", "integer")
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" ("+strings.Join(defs, ", ")+")")
	src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" (id) VALUES (1)")
	if _, err := weir.Transfer(ctx, src.URL, dst.URL, weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestSchema: dst.Schema}); err != nil {
		t.Fatal(err)
	}
	for col, w := range want {
		got := dst.Query(t, ctx, fmt.Sprintf("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = '%s'::regclass AND attname = '%s'", dst.Table("t"), col))
		if got != w {
			t.Errorf("%s (source %s): destination type %s, want %s", col, defs[atoiCol(col)], got, w)
		}
	}
}

func atoiCol(col string) int {
	var n int
	fmt.Sscanf(col, "c%d", &n)
	return n
}
