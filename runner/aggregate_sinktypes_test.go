package runner

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
)

// TestAggregate_FirstRunOverForeignSinkTypes: an aggregate's first run
// over a sink that already holds rows whose columns have other types than
// the aggregate writes (another task built gold.agg with s as text, n as
// INTEGER or g as text) is refused as bad input naming the sink and the
// column, before a row is written; the sink keeps its rows.
func TestAggregate_FirstRunOverForeignSinkTypes(t *testing.T) {
	for _, c := range []struct{ pre, col string }{
		{"SELECT customer_id AS g, CAST(count(*) AS BIGINT) AS n, CAST(sum(amount) AS VARCHAR) AS s FROM input GROUP BY 1", "s"},
		{"SELECT customer_id AS g, CAST(count(*) AS INTEGER) AS n, CAST(sum(amount) AS DECIMAL(38,2)) AS s FROM input GROUP BY 1", "n"},
		{"SELECT CAST(customer_id AS VARCHAR) AS g, CAST(count(*) AS BIGINT) AS n, CAST(sum(amount) AS DECIMAL(38,2)) AS s FROM input GROUP BY 1", "g"},
		// The same types: the first run recomputes its groups over the rows.
		{"SELECT customer_id AS g, CAST(count(*) AS BIGINT) AS n, CAST(sum(amount) AS DECIMAL(38,2)) AS s FROM input GROUP BY 1", ""},
	} {
		d := newLakeDAG(t, "warn")
		body, _ := readFile(d.path)
		writeFile(t, d.path, body+`  pre:
    model:
      source: lake:bronze.orders
      sink: lake:gold.agg
      mode: replace
      sql: "`+c.pre+`"
`)
		r := d.runner(t)
		d.orders(t, 1, 10)
		once(t, r, "bronze_orders")
		if rep := once(t, r, "pre"); rep.Error != "" {
			t.Fatalf("pre: %+v", rep)
		}
		before := sortedRows(t, r, "gold.agg")
		// The table was built by another task (or tool): the aggregate's
		// first run finds it full.
		writeFile(t, d.path, body+`  agg:
    model:
      source: lake:bronze.orders
      sink: lake:gold.agg
      sql: SELECT customer_id AS g, CAST(amount AS DECIMAL(12,2)) AS a FROM input
      aggregate: {group_by: [g], measures: {n: count(*), s: sum(a)}}
`)
		r = d.runner(t)
		_, err := r.Once(testContext(t), "agg")
		if c.col == "" {
			if err != nil {
				t.Errorf("%s: %v, want the types accepted", c.pre, err)
			}
			continue
		}
		if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "gold.agg") || !strings.Contains(err.Error(), "column "+c.col) {
			t.Errorf("%s: %v, want bad input naming gold.agg and column %s", c.pre, err, c.col)
		}
		if after := sortedRows(t, r, "gold.agg"); !slices.Equal(after, before) {
			t.Errorf("%s: the sink changed: %v, was %v", c.pre, after, before)
		}
	}
}
