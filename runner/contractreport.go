package runner

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/runner/duck"
)

// noteContract adds one checked batch (_weir_checked) to the report's
// contract result: its counts and the rows breaking each rule. A reason
// lists the labels of the rules a row breaks, "; "-separated.
func noteContract(ctx context.Context, db *duck.DB, c *dagfile.Contract, rep *Report, total, bad int64) error {
	res := rep.Contract
	if res == nil {
		res = &ContractResult{MaxBadRatio: c.MaxBadRatio, Passed: true, Rules: map[string]int64{}}
		rep.Contract = res
	}
	res.Checked += total
	res.Broken += bad
	if total > 0 && float64(bad)/float64(total) > c.MaxBadRatio {
		res.Passed = false
	}
	if bad == 0 {
		return nil
	}
	q := fmt.Sprintf(`SELECT coalesce(CAST(json_group_object(r, n) AS VARCHAR), '{}') FROM (
		SELECT r, count(*) AS n FROM (SELECT unnest(string_split(%[1]s, '; ')) AS r FROM %[2]s WHERE %[1]s IS NOT NULL) GROUP BY r)`,
		reasonColumn, checkedTable)
	var text string
	if err := db.QueryRow(ctx, q, &text); err != nil {
		return fmt.Errorf("contract counts: %w", err)
	}
	var counts map[string]int64
	if err := json.Unmarshal([]byte(text), &counts); err != nil {
		return fmt.Errorf("contract counts %q: %w", text, err)
	}
	for rule, n := range counts {
		res.Rules[rule] += n
	}
	return nil
}
