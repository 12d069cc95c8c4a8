package pgwal

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes/routestest"
)

// walCases add to typeCases the types and edge values whose text a
// bootstrap (the bulk route's binary read) and pgoutput (each type's text
// output) carry in different forms. Types "%s" is the source schema
// (enums and domains are made there).
var walCases = []cdctest.Case{
	{Name: "interval", Type: "interval", Values: lits("'1 mon -1 day 00:00:00.000001'", "'-1 mon 1 day -00:00:00.000001'",
		"'178000000 years'", "'-178000000 years'", "'0'", "'3 mons'", "'-5 days'", "'-1 year -2 mons +3 days -04:05:06.5'",
		"'2562047:47:16.854775'", "'-2562047:47:16.854775'", "'1 day 00:00:00.5'")},
	{Name: "numedge", Type: "numeric", Values: lits("'1.50'", "'-0'", "'0.000000000000000000000000000001'", "'123456789012345678901234567890.123456789'")},
	{Name: "f8edge", Type: "float8", Values: lits("'-0'", "2.2250738585072014e-308", "1e-300", "5e-324", "-2.2250738585072e-308")},
	{Name: "f4edge", Type: "float4", Values: lits("'-0'", "1.17549435e-38", "1.4e-45")},
	{Name: "bpchar", Type: "char(5)", Values: lits("'a'", "''", "'abcde'")},
	{Name: "char1", Type: `"char"`, Values: lits(`'a'`)},
	{Name: "name", Type: "name", Values: lits("'n'")},
	{Name: "varchar", Type: "varchar(10)", Values: lits("'x y'")},
	{Name: "oid", Type: "oid", Values: lits("4294967295", "0")},
	{Name: "jsonb", Type: "jsonb", Values: lits(`'{"b" : [1, 2.50], "a": null}'`, `'"x"'`, `'1e400'`)},
	{Name: "json2", Type: "json", Values: lits(`'{"a" : 1}'`, `' [ ] '`)},
	{Name: "time2", Type: "time", Values: lits("'24:00:00'", "'00:00:00.000001'")},
	{Name: "timetz", Type: "timetz", Values: lits("'12:34:56.789+05:30'", "'00:00:00-12'")},
	{Name: "uuid2", Type: "uuid", Values: lits("'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'")},
	{Name: "bytea2", Type: "bytea", Values: lits(`'\x5c'`, `'\xff00'`)},
	{Name: "bool2", Type: "bool", Values: lits("true", "false")},
	{Name: "bit", Type: "bit(4)", Values: lits("B'1010'")},
	{Name: "varbit", Type: "varbit", Values: lits("B''", "B'1'")},
	{Name: "money", Type: "money", Values: lits("'-92233720368547758.08'", "'1.5'")},
	{Name: "inet", Type: "inet", Values: lits("'192.168.0.1/24'", "'::1'", "'10.0.0.1'")},
	{Name: "cidr", Type: "cidr", Values: lits("'10.0.0.0/8'")},
	{Name: "enum", Type: "%s.mood", Values: lits("'ok'", "'très'")},
	{Name: "domain", Type: "%s.posint", Values: lits("1")},
	{Name: "domtext", Type: "%s.shorttext", Values: lits("'é'")},
}

// bootstrapWALCases: every case each destination holds. A case refused
// there (Refuse) is not copied: TestRun_Types holds the WAL to refusing it.
func bootstrapWALCases(kind string) []cdctest.Case {
	var out []cdctest.Case
	for _, c := range append(append([]cdctest.Case(nil), typeCases...), walCases...) {
		if !c.Refuses(kind) {
			out = append(out, c)
		}
	}
	return out
}

// TestRun_BootstrapVsWAL: a log_based replica holds the same value
// whether the row came through the bootstrap (rows 1…n) or through the
// WAL (rows 1001…1000+n, the same literals), value by value, for every
// type of typeCases and walCases, into every destination. All of one
// destination's tables are one replica (one slot): two runs.
func TestRun_BootstrapVsWAL(t *testing.T) {
	for _, kind := range destinations {
		t.Run(kind, func(t *testing.T) { bootstrapVsWAL(t, kind) })
	}
}

func bootstrapVsWAL(t *testing.T, kind string) {
	ctx := routestest.Context(t, 3*time.Minute)
	sdb, ddb := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, kind)
	sdb.Exec(t, ctx, fmt.Sprintf("CREATE TYPE %s.mood AS ENUM ('ok', 'très')", sdb.Schema))
	sdb.Exec(t, ctx, fmt.Sprintf("CREATE DOMAIN %s.posint AS int CHECK (VALUE > 0)", sdb.Schema))
	sdb.Exec(t, ctx, fmt.Sprintf("CREATE DOMAIN %s.shorttext AS varchar(3)", sdb.Schema))
	cases := bootstrapWALCases(kind)
	cfg := Config{SourceURL: sdb.URL, DestURL: ddb.URL}
	insert := func(c cdctest.Case, from int) {
		var rows []string
		for i, v := range c.Values {
			rows = append(rows, fmt.Sprintf("(%d, %s)", from+i, v.Lit))
		}
		rows = append(rows, fmt.Sprintf("(%d, NULL)", from+len(c.Values)))
		sdb.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES %s", sdb.Table(c.Table()), strings.Join(rows, ", ")))
	}
	for _, c := range cases {
		typ := strings.ReplaceAll(c.Type, "%s", sdb.Schema)
		sdb.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id int PRIMARY KEY, v %s)", sdb.Table(c.Table()), typ))
		insert(c, 1)
		cfg.Tables = append(cfg.Tables, Pair{Source: sdb.Ref(c.Table()), Dest: ddb.Ref(c.Table())})
	}
	slot, _ := cfg.Name()
	t.Cleanup(func() {
		cctx, cancel := routestest.CleanupContext()
		defer cancel()
		conn := sdbConn(t, sdb)
		defer conn.Close(cctx)
		if err := dropSlot(cctx, conn, slot); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		dropPublication(cctx, conn, slot)
	})
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	for _, c := range cases {
		insert(c, 1001)
	}
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatalf("wal: %v", err)
	}
	cdctest.SameAsBootstrap(t, ctx, ddb, cases, "WAL")
}
