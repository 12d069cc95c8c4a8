package binlog

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes/routestest"
)

// binlogCases add to typeCases MariaDB types and values whose bulk read
// and binlog image differ in form.
var binlogCases = []cdctest.Case{
	{Name: "float", Type: "FLOAT", Values: lits("1.17549435e-38", "3.40282e38", "-0", "0.1")},
	{Name: "smallint", Type: "SMALLINT UNSIGNED", Values: lits("65535", "0")},
	{Name: "mediumint", Type: "MEDIUMINT", Values: lits("-8388608", "8388607")},
	{Name: "dec0", Type: "DECIMAL(10,0)", Values: lits("-9999999999", "0")},
	{Name: "dec", Type: "DECIMAL(5,2)", Values: lits("'-0.00'", "'999.99'", "'-1.50'")},
	{Name: "enum", Type: "ENUM('a','très','')", Values: lits("'a'", "'très'", "''")},
	{Name: "set", Type: "SET('x','y')", Values: lits("'x,y'", "''", "'y'")},
	{Name: "dt3", Type: "DATETIME(3)", Values: lits("'2024-01-02 03:04:05.123'"), Refuse: "clickhouse"},
	{Name: "ts0", Type: "TIMESTAMP NULL", Values: lits("'2024-01-02 03:04:05'")},
	{Name: "time0", Type: "TIME", Values: lits("'12:34:56'")},
	{Name: "longtext", Type: "LONGTEXT", Values: lits("REPEAT('ab', 5000)")},
	{Name: "json2", Type: "JSON", Values: lits(`'[1, "x", null]'`, `'"s"'`)},
}

// TestRun_BootstrapVsBinlog: a log_based replica holds the same value
// whether the row came through the bootstrap (rows 1…n, the bulk read) or
// through the binlog (rows 1001…1000+n, the same literals), value by
// value, for every type of typeCases and binlogCases, into every
// destination. A case the destination refuses (Refuse) is left to
// TestRun_Types.
func TestRun_BootstrapVsBinlog(t *testing.T) {
	for _, kind := range destinations {
		t.Run(kind, func(t *testing.T) { bootstrapVsBinlog(t, kind) })
	}
}

func bootstrapVsBinlog(t *testing.T, kind string) {
	ctx := routestest.Context(t, 3*time.Minute)
	src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, kind)
	cfg := Config{SourceURL: src.URL, DestURL: dst.URL}
	var cases []cdctest.Case
	for _, c := range append(append([]cdctest.Case(nil), typeCases...), binlogCases...) {
		if !c.Refuses(kind) {
			cases = append(cases, c)
		}
	}
	insert := func(c cdctest.Case, from int) {
		var rows []string
		for i, v := range c.Values {
			rows = append(rows, fmt.Sprintf("(%d, %s)", from+i, v.Lit))
		}
		rows = append(rows, fmt.Sprintf("(%d, NULL)", from+len(c.Values)))
		src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES %s", src.Table(c.Table()), strings.Join(rows, ", ")))
	}
	for _, c := range cases {
		src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, v %s)", src.Table(c.Table()), c.Type))
		insert(c, 1)
		cfg.Tables = append(cfg.Tables, Pair{Source: src.Ref(c.Table()), Dest: dst.Ref(c.Table())})
	}
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	for _, c := range cases {
		insert(c, 1001)
	}
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatalf("binlog: %v", err)
	}
	cdctest.SameAsBootstrap(t, ctx, dst, cases, "binlog")
}
