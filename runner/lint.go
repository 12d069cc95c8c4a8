package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/routes/stream"
)

// LintStreams checks the shape of the stream source URLs written out in
// the dagfile (those built from ${VAR}s are checked when the task runs):
// a malformed sqs:// URL is an error at lint, not at the first run.
func LintStreams(f *dagfile.File, tasks []*dagfile.Task) []dagfile.Finding {
	var out []dagfile.Finding
	for _, t := range tasks {
		s := t.Stream
		if s == nil || s.IsTableSource() {
			continue
		}
		raw := s.Source
		if c := f.Connections[s.SourceConn]; c != nil {
			raw = c.Raw
		}
		if raw == "" || strings.Contains(raw, "${") {
			continue
		}
		if err := stream.CheckURL(raw); err != nil {
			line, col := t.Pos("stream.source")
			out = append(out, dagfile.Finding{Rule: dagfile.RuleFormat, Severity: severity(dagfile.RuleFormat), File: f.Path,
				Line: line, Col: col, Task: t.Name, Message: fmt.Sprintf("task %s: stream.source: %v", t.Name, err)})
		}
	}
	return out
}

// LintContracts binds the contracts of tasks in DuckDB, as the contract
// check would run them (contractSQL), over one row of NULLs of the
// contract's types: a type name DuckDB does not know and a rule that does
// not parse or bind are errors (CONTRACT-001) at the column's or rule's
// position; a rule that reads a column the contract does not list cannot
// be bound here (CONTRACT-002, a warning). Without the engine (a build
// without cgo) it checks nothing.
func LintContracts(ctx context.Context, f *dagfile.File, tasks []*dagfile.Task) ([]dagfile.Finding, error) {
	db, err := duck.Open(ctx, duck.Options{Threads: 1})
	if errors.Is(err, duck.ErrNoEngine) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var out []dagfile.Finding
	for _, t := range tasks {
		c := t.Contract
		if c == nil {
			continue
		}
		file := f.Path
		if c.File != "" {
			file = c.File
		}
		add := func(rule string, line, col int, format string, args ...any) {
			out = append(out, dagfile.Finding{Rule: rule, Severity: severity(rule), File: file, Line: line, Col: col, Task: t.Name,
				Message: fmt.Sprintf("task %s: contract: ", t.Name) + fmt.Sprintf(format, args...)})
		}
		bad := map[string]bool{}
		for _, col := range c.Columns {
			if col.Type == "" {
				continue
			}
			if err := bind(ctx, db, "SELECT NULL::"+col.Type); err != nil {
				bad[col.Name] = true
				add(dagfile.RuleContractBind, col.Line, col.Col, "column %s: type %q: %s (a DuckDB type, or one of the names in docs/dagfile.md#contracts)", col.Name, col.Type, err)
			}
		}
		if len(bad) > 0 {
			continue // the rules bind over the types
		}
		for _, r := range c.Rules {
			err := bind(ctx, db, bindSQL(c, r)...)
			if err == nil {
				err = bindValues(ctx, db, c, r)
			}
			switch {
			case err == nil:
			case strings.Contains(err.Error(), "Referenced column"):
				if len(c.Columns) > 0 {
					add(dagfile.RuleContractUnbound, r.Line, r.Col, "rule %s: %s: %s", ruleLabel(r), err, unboundHint(c))
				}
			default:
				add(dagfile.RuleContractBind, r.Line, r.Col, "rule %s: %s", ruleLabel(r), err)
			}
		}
		// Dataset rules (OLC) judge the good rows: bound over the same row
		// of NULLs, as the view source.
		for _, r := range c.DatasetRules {
			stmts := bindSQL(c, dagfile.ContractRule{Kind: dagfile.RuleSQL, SQL: "true"})
			stmts[len(stmts)-1] = datasetSQL(r, "SELECT * FROM "+lintTable)
			switch err := bind(ctx, db, stmts...); {
			case err == nil:
			case strings.Contains(err.Error(), "Referenced column"):
				add(dagfile.RuleContractUnbound, r.Line, r.Col, "dataset rule %s: %s: %s", r.Name, err, unboundHint(c))
			default:
				add(dagfile.RuleContractBind, r.Line, r.Col, "dataset rule %s: %s", r.Name, err)
			}
		}
	}
	dagfile.SortFindings(out, f.Path)
	return out, nil
}

// unboundHint says how to let lint bind a rule over a column it does not know.
func unboundHint(c *dagfile.Contract) string {
	if c.Format == dagfile.FormatOLC {
		return "the model's fields do not list the column (a column a transformation makes, which the sink does not get?): lint cannot check the rule; the run binds it"
	}
	return "list the column under columns: (with its type) so lint can check the rule"
}

// bindValues casts the literals of an accepted_values or range rule to
// their column's contract type: the check compares them in that type.
func bindValues(ctx context.Context, db *duck.DB, c *dagfile.Contract, r dagfile.ContractRule) error {
	var typ string
	for _, col := range c.Columns {
		if col.Name == r.Column {
			typ = col.Type
		}
	}
	vals := r.Values
	if r.Kind == dagfile.RuleRange {
		vals = []string{r.Min, r.Max}
	}
	for _, v := range vals {
		if typ == "" || v == "" {
			continue
		}
		if err := bind(ctx, db, fmt.Sprintf("SELECT CAST(%s AS %s)", duck.Literal(v), typ)); err != nil {
			return fmt.Errorf("value %s is not a %s: %w", v, typ, err)
		}
	}
	return nil
}

func severity(rule string) dagfile.Severity {
	for _, r := range dagfile.Rules {
		if r.ID == rule {
			return r.Severity
		}
	}
	return dagfile.SeverityError
}

// ruleLabel names a rule in a message: its name, else its kind and SQL or
// columns.
func ruleLabel(r dagfile.ContractRule) string {
	switch {
	case r.Name != "":
		return r.Name
	case r.SQL != "":
		return "sql: " + r.SQL
	case r.Column != "":
		return r.Kind + "(" + r.Column + ")"
	}
	return r.Kind + "(" + strings.Join(r.Columns, ", ") + ")"
}

// bind runs the statements, the last to its end, and returns DuckDB's
// error, first line only.
func bind(ctx context.Context, db *duck.DB, stmts ...string) error {
	var err error
	for _, q := range stmts[:len(stmts)-1] {
		if err = db.Exec(ctx, q); err != nil {
			break
		}
	}
	var res array.RecordReader
	if err == nil {
		res, err = db.Query(ctx, stmts[len(stmts)-1])
	}
	if err == nil {
		for res.Next() {
		}
		err = res.Err()
		res.Release()
	}
	if err == nil {
		return nil
	}
	msg, _, _ := strings.Cut(strings.TrimPrefix(err.Error(), "duckdb: "), "\n")
	return errors.New(strings.TrimSpace(msg))
}
