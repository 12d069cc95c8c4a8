package runner

import (
	"context"

	"github.com/weirhq/weir/duck"
)

// Starting DuckDB takes a tenth of a second or more (seconds on a loaded
// machine), as long as a small incremental batch takes to run: a model run
// starts it in the background while it polls its sources, and the runner
// keeps it between model runs (emptied of the run's tables) until Close.
// A run that finds nothing new hands the engine back without waiting for
// it to finish opening, so a pass with nothing to do never waits on it.

// engineFuture is an engine being opened in the background.
type engineFuture struct {
	ch   chan struct{}
	db   *duck.DB
	err  error
	used bool // a run asked for the engine (and may have left tables in it)
}

// startEngine returns the kept engine (open or still opening), or starts
// opening one.
func (r *Runner) startEngine(ctx context.Context) *engineFuture {
	r.mu.Lock()
	f := r.engine
	r.engine = nil
	r.mu.Unlock()
	if f != nil {
		f.used = false
		return f
	}
	f = &engineFuture{ch: make(chan struct{})}
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

// close waits for the engine and closes it.
func (f *engineFuture) close() error {
	<-f.ch
	if f.err != nil {
		return nil // it never opened
	}
	return f.db.Close()
}

// releaseEngine hands the engine back to the runner for the next model
// run: as it is when the run never used it, else once its tables are
// dropped (an engine that failed to open or to reset is closed).
func (r *Runner) releaseEngine(f *engineFuture) {
	if f.used {
		db, err := f.get()
		if err != nil {
			return
		}
		if err := db.Reset(context.Background()); err != nil {
			db.Close()
			return
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.engine == nil {
		r.engine = f
		return
	}
	f.close()
}
