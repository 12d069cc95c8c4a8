package bigquery

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/weirhq/weir/routes"
)

// quoteIdent quotes a name (or a dotted path) with backticks, escaping
// backslashes and backticks inside.
func quoteIdent(s string) string {
	return "`" + strings.NewReplacer(`\`, `\\`, "`", "\\`").Replace(s) + "`"
}

// quoteString renders s as a GoogleSQL string literal.
func quoteString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`).Replace(s) + "'"
}

func columnList(names []string, prefix string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = prefix + quoteIdent(n)
	}
	return strings.Join(q, ", ")
}

// insertSQL appends the staged rows to the destination.
func insertSQL(dest, stage string, cols []string) string {
	return fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s", dest, columnList(cols, ""), columnList(cols, ""), stage)
}

// mergeSQL upserts the staged rows by key: matched rows take the staged
// values, new keys are inserted.
func mergeSQL(dest, stage string, cols, key []string) string {
	on := make([]string, len(key))
	for i, k := range key {
		on[i] = fmt.Sprintf("T.%s = S.%s", quoteIdent(k), quoteIdent(k))
	}
	var sets []string
	for _, c := range cols {
		if !contains(key, c) {
			sets = append(sets, fmt.Sprintf("%s = S.%s", quoteIdent(c), quoteIdent(c)))
		}
	}
	q := fmt.Sprintf("MERGE %s T USING %s S ON %s", dest, stage, strings.Join(on, " AND "))
	if len(sets) > 0 {
		q += " WHEN MATCHED THEN UPDATE SET " + strings.Join(sets, ", ")
	}
	return q + fmt.Sprintf(" WHEN NOT MATCHED THEN INSERT (%s) VALUES (%s)", columnList(cols, ""), columnList(cols, "S."))
}

// transactionSQL is the one script of an append or merge: the data and its
// state row commit together or not at all.
func transactionSQL(apply, saveState string) string {
	return "BEGIN TRANSACTION;\n" + apply + ";\n" + saveState + ";\nCOMMIT TRANSACTION;"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var jobIDUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// jobID names a run's commit job, so the next run can look it up: letters,
// digits, _ and - only, at most 1024 characters.
func jobID(kind string, dest routes.TableRef, runID string) string {
	id := jobIDUnsafe.ReplaceAllString(fmt.Sprintf("weir_%s_%s_%s_%s", kind, dest.Schema, dest.Name, runID), "_")
	if len(id) > 1024 {
		id = id[:1000] + "_" + runID
	}
	return id
}
