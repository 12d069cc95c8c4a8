package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

// Reset moves a model task's position in its sources to earliest, latest
// (each source's head) or an offset (single-source models), and writes it
// into the sink's state the way a commit does: an empty append committed
// with the new marks, in the sink's own transaction (a sink that does not
// exist yet is created empty). The next run reads on from there; the rows
// already in the sink stay (an upsert replay rewrites them unchanged, an
// append replay adds them again).
func (r *Runner) Reset(ctx context.Context, name, to string) (*Report, error) {
	t, err := r.task(name)
	if err != nil {
		return nil, err
	}
	if t.Kind != dagfile.KindModel {
		return nil, routes.BadInput("reset moves a model's offsets; task %s is a %s, whose watermark follows its destination (use mode: replace to reload it)", name, t.Kind)
	}
	target, err := incremental.ParseStart(to)
	if err != nil {
		return nil, err
	}
	rep := newReport(t)
	err = r.reset(ctx, t, target, rep)
	rep.finish(err)
	if err != nil {
		return rep, fmt.Errorf("reset %s: %w", name, err)
	}
	return rep, nil
}

func (r *Runner) reset(ctx context.Context, t *dagfile.Task, target incremental.Start, rep *Report) error {
	run, err := r.newModelRun(ctx, t, rep)
	if err != nil {
		return err
	}
	defer run.close()
	run.mode = routes.ModeAppend // commit no rows, only the marks
	run.resetting = true
	if err := run.openInputs(ctx); err != nil {
		return err
	}
	if len(run.missing) > 0 {
		return routes.BadInput("task %s: %s does not exist yet; run its upstream first", t.Name, strings.Join(run.missing, ", "))
	}
	if target.Offset != "" && len(run.inputs) > 1 {
		return routes.BadInput("task %s reads %d sources: reset --to an offset needs one; use earliest or latest", t.Name, len(run.inputs))
	}
	for _, in := range run.inputs {
		from := ""
		if in.c != nil {
			from = in.c.Position()
		}
		if err := run.seekInput(ctx, in, target); err != nil {
			return fmt.Errorf("seek %s: %w", in.addr, err)
		}
		rep.Offsets[in.name] = OffsetRange{Table: in.addr.String(), From: from, To: in.b.To}
	}
	if err := run.execute(ctx); err != nil {
		return err
	}
	return run.lag(ctx)
}

// seekInput places an input at the target and gives it an empty batch there.
func (run *modelRun) seekInput(ctx context.Context, in *input, target incremental.Start) error {
	if in.c == nil {
		s, err := array.NewRecordReader(in.info.Schema(), nil)
		in.b = &incremental.Batch{Source: in.name, Empty: true, Base: -1, Stream: s}
		return err
	}
	offset := target.Offset
	if target.Latest {
		head, _, err := in.c.Head(ctx)
		if err != nil {
			return err
		}
		offset = head
	}
	in.c.Seek(offset)
	var err error
	in.b, err = in.c.At(ctx)
	return err
}
