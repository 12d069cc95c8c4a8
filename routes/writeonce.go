package routes

import (
	"context"
	"time"
)

// AbortTimeout bounds the rollback that runs after an error, a cancel or
// SIGTERM (Abort).
const AbortTimeout = 30 * time.Second

// Abort rolls a stage back on a context that survives the caller's cancel
// (bounded by AbortTimeout), so a cancelled run still leaves the
// destination as it was.
func Abort(ctx context.Context, stage Stage) error {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), AbortTimeout)
	defer cancel()
	return stage.Abort(actx)
}

// Once shapes WriteOnce.
type Once struct {
	// Keep, asked after a clean write of rows, returns true to leave the
	// destination as it was: the stage is aborted, not committed (an
	// empty replace never wipes a table). Nil never keeps.
	Keep func(rows int64) bool
	// Phase is the Checkpoint reached just before Commit.
	Phase string
	// Commit commits the written stage with its state. Nil leaves the
	// stage written and uncommitted, for the caller to commit with
	// another (JointStage.CommitWith); WriteOnce then only aborts a
	// failed write.
	Commit func(ctx context.Context, rows int64) error
}

// WriteOnce writes one stream into a prepared stage and commits it: the
// one-stream form of Copy's write and commit, for writers whose rows come
// as one stream (a model's result, its quarantine, a stream task's batch).
// A failed Write, a stream that ends with an error, and a failed
// checkpoint or Commit abort the stage (Abort) and return the error; rows
// is what Write wrote, even then. kept reports that Keep kept the
// destination as it was (err is then Abort's).
func WriteOnce(ctx context.Context, stage Stage, s Stream, o Once) (rows int64, kept bool, err error) {
	rows, err = stage.Write(ctx, s)
	if err == nil {
		err = s.Err()
	}
	if err == nil && o.Keep != nil && o.Keep(rows) {
		return rows, true, Abort(ctx, stage)
	}
	if err == nil && o.Commit != nil {
		if err = Checkpoint(o.Phase); err == nil {
			err = o.Commit(ctx, rows)
		}
	}
	if err != nil {
		Abort(ctx, stage)
	}
	return rows, false, err
}
