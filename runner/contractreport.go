package runner

import (
	"context"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/duck"
)

// noteContract adds one checked batch (_weir_checked, checked by plan) to
// the report's contract result: its counts and the rows breaking each rule
// (among the rows matching where, when given).
func noteContract(ctx context.Context, db *duck.DB, c *dagfile.Contract, plan contractPlan, where string, rep *Report, total, bad int64) error {
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
	counts, err := plan.countRules(ctx, db, where)
	if err != nil {
		return err
	}
	for rule, n := range counts {
		res.Rules[rule] += n
	}
	return nil
}
