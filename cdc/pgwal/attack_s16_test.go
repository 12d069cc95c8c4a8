package pgwal

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes/routestest"
)

// sessionCases are the types whose text output (what pgoutput sends)
// depends on a session setting. The dates' days are 12 or less: a day
// and month read the other way round are a date too.
var sessionCases = []cdctest.Case{
	{Name: "f8", Type: "float8", Values: lits("0.30000000000000004", "1.0000000000000002", "2.2250738585072014e-308")},
	{Name: "f4", Type: "float4", Values: lits("0.1", "1.0000001", "3.4028235e38")},
	{Name: "by", Type: "bytea", Values: lits(`'\x00ff5c'`, `'\x'`)},
	{Name: "d", Type: "date", Values: lits("'2024-01-02'", "'2024-11-05'", "'0044-03-04 BC'")},
	{Name: "ts", Type: "timestamp", Values: lits("'2024-01-02 03:04:05.123456'", "'2024-02-03 23:59:59'")},
	{Name: "tz", Type: "timestamptz", Values: lits("'2024-01-02 03:04:05.5+00'", "'1900-01-01 00:00:00+00'")},
	{Name: "iv", Type: "interval", Values: lits("'1 year 2 mons -3 days 04:05:06.789'", "'-1 day +00:00:00.000001'", "'178000000 years'")},
	{Name: "tt", Type: "timetz", Values: lits("'12:34:56.789+05:30'")},
	{Name: "mo", Type: "money", Values: lits("'1234.56'")},
}

// TestAttackS16_RoleSessionSettings: the source's role (or database)
// carries its own session settings (ALTER ROLE … SET, as ALTER DATABASE …
// SET does), which a replication connection takes too: pgoutput prints
// each value with them. Every value must land as a bulk read under the
// defaults gives it, through the bootstrap and through the WAL.
func TestAttackS16_RoleSessionSettings(t *testing.T) {
	for _, set := range []string{
		"extra_float_digits = 0",
		"extra_float_digits = -3",
		"bytea_output = 'escape'",
		"DateStyle = 'SQL, DMY'",
		"DateStyle = 'German'",
		"DateStyle = 'Postgres, MDY'",
		"IntervalStyle = 'sql_standard'",
		"IntervalStyle = 'iso_8601'",
		"TimeZone = 'Asia/Kathmandu'",
	} {
		t.Run(set, func(t *testing.T) { roleSessionSettings(t, "postgres", set, sessionCases) })
	}
	for _, kind := range destinations[1:] { // the two that changed values, into every other destination
		for _, set := range []string{"extra_float_digits = 0", "DateStyle = 'SQL, DMY'"} {
			t.Run(kind+"/"+set, func(t *testing.T) { roleSessionSettings(t, kind, set, nil) })
		}
	}
}

// roleSessionSettings runs cases (nil: sessionCases, in every
// destination's ranges) from a role with set through the bootstrap and the
// WAL into kind; set "" reads as the test's own role.
func roleSessionSettings(t *testing.T, kind, set string, cases []cdctest.Case) {
	ctx := routestest.Context(t, 2*time.Minute)
	sdb, ddb := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, kind)
	user := *sdb // the same schema, connected as role
	if set != "" {
		role := sdb.Schema + "_r"
		sdb.Exec(t, ctx, fmt.Sprintf("CREATE ROLE %s LOGIN SUPERUSER REPLICATION", role))
		sdb.Exec(t, ctx, fmt.Sprintf("ALTER ROLE %s SET %s", role, set))
		t.Cleanup(func() {
			cctx, cancel := routestest.CleanupContext()
			defer cancel()
			conn := sdbConn(t, sdb)
			defer conn.Close(cctx)
			conn.Exec(cctx, "DROP OWNED BY "+role)
			if _, err := conn.Exec(cctx, "DROP ROLE "+role); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		})
		user.URL = strings.Replace(sdb.URL, "//root@", "//"+role+"@", 1)
		if user.URL == sdb.URL {
			t.Fatalf("no root@ in %s", sdb.URL)
		}
	}
	cfg := Config{SourceURL: user.URL, DestURL: ddb.URL}
	insert := func(c cdctest.Case, from int) {
		var rows []string
		for i, v := range c.Values {
			rows = append(rows, fmt.Sprintf("(%d, %s)", from+i, v.Lit))
		}
		rows = append(rows, fmt.Sprintf("(%d, NULL)", from+len(c.Values)))
		sdb.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES %s", sdb.Table(c.Table()), strings.Join(rows, ", ")))
	}
	if cases == nil && kind == "postgres" {
		cases = sessionCases
	} else if cases == nil { // in every destination's ranges (a BC date is TestRun_Types')
		cases = []cdctest.Case{sessionCases[0], {Name: "f4", Type: "float4", Values: lits("0.1", "1.0000001")}, // float4's largest: attack_s16_float4max_test.go
			{Name: "d", Type: "date", Values: lits("'2024-01-02'", "'2024-11-05'")},
			{Name: "ts", Type: "timestamp", Values: lits("'2024-01-02 03:04:05'", "'2024-02-03 23:59:59'")}}
	}
	for _, c := range cases {
		sdb.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id int PRIMARY KEY, v %s)", sdb.Table(c.Table()), c.Type))
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
	for _, c := range cases {
		if kind == "clickhouse" {
			ddb.Exec(t, ctx, "OPTIMIZE TABLE "+ddb.Table(c.Table())+" FINAL")
		}
		want, srcTypes := cdctest.SourceValues(t, ctx, sdb, c.Table(), []string{"v"})
		cdctest.Compare(t, ctx, ddb, c.Table(), []string{"v"}, srcTypes, want, set)
	}
}
