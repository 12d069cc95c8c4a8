package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/weirhq/weir/routes"
)

// on_change reports source commits an append cursor cannot see. What is
// detected:
//
//   - SQL sources: the number of rows at or below the committed offset,
//     counted when the offset is committed and again at the next run. Fewer
//     means rows were deleted below the offset; more means rows arrived
//     below it (the cursor is not monotonic: they were skipped). A head that
//     fell below the offset means the newest rows were deleted. Updates in
//     place (same cursor value) are not seen. Counting reads the cursor
//     column of the rows below the offset each run; on_change: ignore
//     skips it.
//   - Iceberg sources: snapshots since the committed one that delete or
//     overwrite rows (routes.SnapshotSummarizer); a compaction that only rewrites
//     files is not flagged.
//
// warn writes the finding to the log and the report and goes on; error
// fails the run before anything is written; ignore checks nothing.

// checkChanges applies on_change to what the inputs found.
func (run *modelRun) checkChanges(ctx context.Context) error {
	if run.m.OnChange == "ignore" || run.mode == routes.ModeReplace {
		return nil
	}
	var found []string
	for _, in := range run.inputs {
		f, err := run.inputChanges(ctx, in)
		if err != nil {
			return fmt.Errorf("on_change %s: %w", in.addr, err)
		}
		found = append(found, f...)
	}
	if len(found) == 0 {
		return nil
	}
	run.rep.Changes = found
	if run.m.OnChange == "error" {
		return fmt.Errorf("on_change: error: %s; nothing was committed (set on_change: warn to read on)", strings.Join(found, "; "))
	}
	for _, f := range found {
		run.r.warnf("task %s: %s", run.t.Name, f)
	}
	return nil
}

// inputChanges lists one input's findings.
func (run *modelRun) inputChanges(ctx context.Context, in *input) ([]string, error) {
	if in.c == nil || in.b == nil {
		return nil, nil
	}
	var found []string
	mk, ok := run.marks[in.name]
	if in.b.Regressed {
		found = append(found, fmt.Sprintf("%s: its newest rows were deleted (the %s maximum fell below the committed offset %s)", in.addr, in.c.Cursor(), in.b.From))
	}
	if ok && run.found && mk.Rows >= 0 && in.b.Base >= 0 && in.b.Base != mk.Rows {
		found = append(found, countChange(in, mk.Rows))
	}
	if in.c.Cursor() == routes.SnapshotCursor && ok && run.found {
		f, err := snapshotChanges(ctx, in)
		return append(found, f...), err
	}
	return found, nil
}

// snapshotChanges reports the Iceberg snapshots in the batch's window that
// deleted or rewrote rows.
func snapshotChanges(ctx context.Context, in *input) ([]string, error) {
	if in.b.To == in.b.From {
		return nil, nil
	}
	sum, err := snapshotSummary(ctx, in, in.b.From, in.b.To)
	if err != nil || !sum.Flagged() {
		return nil, err
	}
	return []string{fmt.Sprintf("%s: %d snapshots after offset %s deleted or rewrote rows (%d data files with %d rows removed, %d delete files with %d deletes added); an incremental read sees only added rows",
		in.addr, sum.Rewrites, in.b.From, sum.DeletedDataFiles, sum.DeletedRows, sum.AddedDeleteFiles, sum.AddedDeleteRows)}, nil
}

func countChange(in *input, was int64) string {
	if in.b.Base < was {
		return fmt.Sprintf("%s: %d rows at or below the committed offset %s were deleted (%d then, %d now)", in.addr, was-in.b.Base, in.b.From, was, in.b.Base)
	}
	return fmt.Sprintf("%s: %d rows arrived at or below the committed offset %s and were skipped (the %s cursor is not monotonic)", in.addr, in.b.Base-was, in.b.From, in.c.Cursor())
}

// snapshotSummary is what the snapshots of a snapshot-cursor input did in
// (after, until] (routes.SnapshotSummarizer: an Iceberg source).
func snapshotSummary(ctx context.Context, in *input, after, until string) (routes.ChangeSummary, error) {
	ss, ok := routes.As[routes.SnapshotSummarizer](in.src)
	if !ok {
		return routes.ChangeSummary{}, fmt.Errorf("%w: changes of a %T source", routes.ErrUnsupported, in.src)
	}
	return ss.Changes(ctx, in.info.Ref, after, until)
}
