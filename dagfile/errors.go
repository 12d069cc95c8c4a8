package dagfile

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Rule ids carried by errors and findings.
const (
	RuleFormat           = "DAG-000" // malformed dagfile: unknown key, bad value, missing field
	RuleCycle            = "DAG-001" // dependency cycle
	RuleUnknownConn      = "DAG-002" // reference to a connection that is not defined
	RuleDuplicateSink    = "DAG-003" // a table written by two tasks
	RuleDroppedUpstream  = "DAG-004" // a selected task whose upstream is not selected
	RuleOrphan           = "DAG-005" // a task with neither upstream nor downstream
	RuleUnknownTask      = "DAG-006" // deps names a task that is not defined
	RuleStreamAppend     = "STREAM-001"
	RuleStreamContinuous = "STREAM-002"
	RuleStreamNoCursor   = "STREAM-003"
	RuleContractBind     = "CONTRACT-001" // DuckDB refuses a contract's type name or rule (weir lint binds them)
	RuleContractUnbound  = "CONTRACT-002" // a rule reads a column the contract does not list: lint cannot bind it
	RulePodLocalFiles    = "K8S-001"      // a task run in a pod uses local files (a file lake, a SQLite catalog) with no volume
	RuleEnvNeeds         = "ENV-000"      // what a task's pod must be given (weir lint --env-from)
	RuleEnvMissing       = "ENV-001"      // a variable a task needs that --env-from does not provide
	// RuleModelIncrementalJoin: a model reads two or more sources incrementally.
	RuleModelIncrementalJoin = "MODEL-001"
	// RuleModelSQL: a model's SQL does not parse, or does not bind against its inputs' known schemas.
	RuleModelSQL = "MODEL-002"
	// RuleModelLookupKey: an incremental model's lookup does not declare its join key.
	RuleModelLookupKey = "MODEL-003"
	// RuleModelUnbound: a model's SQL could not be bound: an input's schema is not knowable offline.
	RuleModelUnbound = "MODEL-004"
	// RuleModelWhole: a model whose SQL cannot run batch by batch (a window,
	// an aggregate without aggregate: or this, a LIMIT over its input): its
	// first run reads its input whole, in DuckDB's memory_limit, spilling to
	// its temp_directory.
	RuleModelWhole = "MODEL-006"
)

// Error is one problem in a dagfile, located at File:Line:Col. Key is the
// dotted path of the offending key (tasks.silver.model.mode) and Msg says
// what is wrong and what is allowed. Rule is the lint rule id (RuleFormat for
// plain format errors).
type Error struct {
	File      string
	Line, Col int
	Key       string
	Msg       string
	Rule      string
}

// Error formats the problem as "file:line:col: key: msg".
func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Col)
	}
	if e.Key == "" {
		return loc + ": " + e.Msg
	}
	return loc + ": " + e.Key + ": " + e.Msg
}

// ErrorList is every problem found in a dagfile, sorted by file and position.
// Parse and Load return it as their error; use errors.As to get it back.
type ErrorList []*Error

// Error joins the problems, one a line.
func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the problems for errors.Is and errors.As.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// sort orders the list by file (main first, then in order of first
// appearance), line and column.
func (l ErrorList) sort(main string) {
	order := map[string]int{main: 0}
	for _, e := range l {
		if _, ok := order[e.File]; !ok {
			order[e.File] = len(order)
		}
	}
	slices.SortStableFunc(l, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(order[a.File], order[b.File]),
			cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
}

// suggest returns the allowed word closest to got, or "" when none is close.
func suggest(got string, allowed []string) string {
	best, bestDist := "", max(1, len(got)/3)+1
	for _, a := range allowed {
		if d := distance(strings.ToLower(got), a); d < bestDist && d < len(got) {
			best, bestDist = a, d
		}
	}
	return best
}

// distance is the Levenshtein edit distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// didYouMean formats the suggestion and the allowed values for a message.
func didYouMean(got string, allowed []string) string {
	s := ""
	if m := suggest(got, allowed); m != "" {
		s = fmt.Sprintf(" (did you mean %q?)", m)
	}
	return s + "; allowed: " + strings.Join(allowed, ", ")
}
