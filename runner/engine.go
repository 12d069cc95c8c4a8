package runner

import (
	"context"

	"github.com/weirhq/weir/runner/duck"
)

// Starting DuckDB takes a tenth of a second or more, as long as a small
// incremental batch takes to run: a model run starts it in the background
// while it polls its sources, and the runner keeps it between model runs
// (emptied of the run's tables) until Close.

// engineFuture is an engine being opened in the background.
type engineFuture struct {
	ch   chan struct{}
	db   *duck.DB
	err  error
	used bool
}

// startEngine returns the kept engine, or starts opening one.
func (r *Runner) startEngine(ctx context.Context) *engineFuture {
	f := &engineFuture{ch: make(chan struct{})}
	r.mu.Lock()
	f.db, r.db = r.db, nil
	r.mu.Unlock()
	if f.db != nil {
		close(f.ch)
		return f
	}
	go func() {
		defer close(f.ch)
		f.db, f.err = duck.Open(context.WithoutCancel(ctx), r.opts.Engine)
	}()
	return f
}

// get waits for the engine.
func (f *engineFuture) get() (*duck.DB, error) {
	<-f.ch
	f.used = true
	return f.db, f.err
}

// release hands the engine back to the runner for the next model run once
// its tables are dropped, or closes it.
func (r *Runner) releaseEngine(f *engineFuture) {
	db, err := f.get()
	if err != nil {
		return
	}
	if err := db.Reset(context.Background()); err != nil {
		db.Close()
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.db == nil {
		r.db = db
		return
	}
	db.Close()
}
