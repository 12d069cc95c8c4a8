package routes

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Closest returns the candidate nearest to got by edit distance (ignoring
// case), or "" when none is near enough to be a typo: at most a third of
// got's length away, and never all of it. (dagfile has its own for keys,
// over a fixed word list; this one is for names read from a server.)
func Closest(got string, candidates []string) string {
	best, bestDist := "", max(1, len(got)/3)+1
	g := strings.ToLower(got)
	for _, c := range candidates {
		if d := editDistance(g, strings.ToLower(c)); d < bestDist && d < len(got) {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// suggestTable adds "did you mean" to a probe's no-such-table error when the
// source can list the schema's tables and one is close to the name given.
func suggestTable(ctx context.Context, src Source, table TableRef, err error) error {
	var pe *ProbeError
	l, ok := As[TableLister](src)
	if !ok || !errors.As(err, &pe) || pe.Column != "" || !errors.Is(pe.Err, ErrNotFound) {
		return err
	}
	tables, lerr := l.ListTables(ctx, table.Schema)
	if lerr != nil || len(tables) == 0 {
		return err
	}
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.Name
	}
	m := Closest(table.Name, names)
	if m == "" {
		return err
	}
	out := *pe
	out.Hint = strings.TrimSpace(fmt.Sprintf("did you mean %s? %s", TableRef{Schema: table.Schema, Name: m}, pe.Hint))
	return &out
}
