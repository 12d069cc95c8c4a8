package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

// loadThis gives a model whose SQL reads the view this (dagfile.ThisView)
// its own sink's rows, as a DuckDB table like the inputs. This is what
// lets an aggregate be incremental: the SQL aggregates the new rows and
// merges them with the stored totals of the same groups, and mode upsert
// replaces just those groups.
//
// this is empty (with the sink's columns) when the run reads every source
// from its start — the first run, or after reset --to earliest — so a
// replay recomputes instead of adding the history to itself twice; and in
// a reset, which commits no rows. Before the sink exists its columns come
// from the contract.
func (run *modelRun) loadThis(ctx context.Context, text string) error {
	tables, err := run.db.TablesRead(ctx, text)
	if err != nil {
		return routes.BadInput("model %s: %v", run.t.Name, err)
	}
	if !slices.Contains(tables, dagfile.ThisView) {
		return nil
	}
	src, err := run.r.source(ctx, run.m.Sink.Conn)
	if err != nil {
		return err
	}
	info, err := src.Probe(ctx, run.ref)
	if errors.Is(err, routes.ErrNotFound) {
		return run.emptyThisFromContract(ctx)
	}
	if err != nil {
		return fmt.Errorf("this (%s): %w", run.m.Sink, err)
	}
	var s array.RecordReader
	if run.resetting || run.fromStart() {
		s, err = array.NewRecordReader(info.Schema(), nil)
	} else {
		s, err = incremental.ReadTable(ctx, src, info, run.r.opts.Budget, run.r.opts.Allocator)
	}
	if err != nil {
		return fmt.Errorf("this (%s): %w", run.m.Sink, err)
	}
	if _, err := run.db.Load(ctx, dagfile.ThisView, s); err != nil {
		return fmt.Errorf("this (%s): %w", run.m.Sink, err)
	}
	return nil
}

// fromStart reports whether every incremental source is read from the
// start of its table.
func (run *modelRun) fromStart() bool {
	for _, in := range run.inputs {
		if in.c != nil && (in.b.From != "" || in.c.Page() != "") {
			return false
		}
	}
	return true
}

// emptyThisFromContract creates this empty, with the contract's columns,
// for the runs before the sink exists.
func (run *modelRun) emptyThisFromContract(ctx context.Context) error {
	c := run.t.Contract
	hint := "give the model a contract: listing every column it writes, with its type (this has the sink's columns, and the sink does not exist before the first run)"
	if c == nil || len(c.Columns) == 0 {
		return routes.BadInput("model %s reads this, but %s does not exist yet: %s", run.t.Name, run.m.Sink, hint)
	}
	cols := make([]string, len(c.Columns))
	for i, col := range c.Columns {
		if col.Type == "" {
			return routes.BadInput("model %s reads this, but %s does not exist yet and contract column %q has no type: %s", run.t.Name, run.m.Sink, col.Name, hint)
		}
		cols[i] = duck.Ident(col.Name) + " " + col.Type
	}
	q := fmt.Sprintf("CREATE OR REPLACE TEMP TABLE %s (%s)", duck.Ident(dagfile.ThisView), strings.Join(cols, ", "))
	if err := run.db.Exec(ctx, q); err != nil {
		return routes.BadInput("model %s: this from the contract's columns: %v", run.t.Name, err)
	}
	return nil
}
