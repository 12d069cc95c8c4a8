package pgwal

import (
	"os"
	"testing"
	"time"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes/routestest"
)

// Attack tests of session 14, by an outside tester: edge values the type
// torture (typeCases) does not hold, through the WAL into each
// destination.
var attackS14Cases = []cdctest.Case{
	{Name: "ts1", Type: "timestamp", Values: lits("'0001-01-01 00:00:00'", "'1000-01-01 00:00:00'"), Refuse: "clickhouse"},
	{Name: "tstz1", Type: "timestamptz", Values: lits("'0001-01-01 00:00:00+00'", "'1800-01-01 00:00:00+00'"), Refuse: "clickhouse"},
	{Name: "date1", Type: "date", Values: lits("'0001-01-01'"), Refuse: "clickhouse"},
}

// TestAttackS14_Types: timestamps before 1970 into a ClickHouse DateTime
// landed as 1970-01-01 00:00:00, exit 0 (the text path was range-checked,
// pgwal's decoded time.Time was not). Want: refused naming the table.
// ATTACK_KIND=postgres|mysql|iceberg runs the same cases elsewhere.
func TestAttackS14_Types(t *testing.T) {
	kinds := []string{"clickhouse"}
	if k := os.Getenv("ATTACK_KIND"); k != "" {
		kinds = []string{k}
	}
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			ctx := routestest.Context(t, 10*time.Minute)
			sdb, ddb := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, kind)
			for _, c := range attackS14Cases {
				t.Run(c.Name, func(t *testing.T) { typeCaseRun(t, sdb, ddb, c, false) })
			}
		})
	}
}
