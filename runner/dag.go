package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/routes"
)

// Select returns the tasks named by selectors (task names, tag:NAME,
// kind:KIND; none = every task) in dependency order. An unset variable of
// a selected task's connections is bad input; those of other tasks are not.
func (r *Runner) Select(selectors ...string) ([]*dagfile.Task, error) {
	picked, err := r.file.Select(selectors...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", routes.ErrBadInput, err)
	}
	if err := r.file.Resolve(picked...); err != nil {
		return nil, fmt.Errorf("%w: %w", routes.ErrBadInput, err)
	}
	want := map[string]bool{}
	for _, t := range picked {
		want[t.Name] = true
	}
	var out []*dagfile.Task
	for _, t := range r.file.Order() {
		if want[t.Name] {
			out = append(out, t)
		}
	}
	return out, nil
}

// Pass runs each task once, in dependency order, and hands each report to
// done. A task whose upstream failed in this pass is skipped (its report
// says so). The error joins the failures.
func (r *Runner) Pass(ctx context.Context, tasks []*dagfile.Task, done func(*Report, error)) error {
	failed := map[string]bool{}
	var errs []error
	for _, t := range tasks {
		if ctx.Err() != nil {
			return errors.Join(append(errs, ctx.Err())...)
		}
		rep, err := r.passTask(ctx, t, failed)
		if err != nil {
			failed[t.Name] = true
			errs = append(errs, err)
		}
		done(rep, err)
	}
	return errors.Join(errs...)
}

func (r *Runner) passTask(ctx context.Context, t *dagfile.Task, failed map[string]bool) (*Report, error) {
	for _, up := range t.Upstream {
		if failed[up] {
			rep := newReport(t)
			err := fmt.Errorf("task %s: skipped: upstream task %s failed in this pass", t.Name, up)
			rep.finish(err)
			return rep, err
		}
	}
	return r.Once(ctx, t.Name)
}

// Loop runs passes every interval (measured from each pass's start) until
// ctx ends; a failed pass is reported through done and the loop goes on.
func (r *Runner) Loop(ctx context.Context, tasks []*dagfile.Task, interval time.Duration, done func(*Report, error)) error {
	if interval <= 0 {
		return routes.BadInput("--interval must be positive, got %s", interval)
	}
	for {
		start := time.Now()
		r.Pass(ctx, tasks, done)
		wait := time.Until(start.Add(interval))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}
