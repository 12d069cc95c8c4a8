package routes_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

// onceStage records what WriteOnce did to it.
type onceStage struct {
	writeErr  error
	calls     []string
	abortCtx  error // the abort context's error when Abort ran
	committed int64
}

func (s *onceStage) Write(ctx context.Context, st routes.Stream) (int64, error) {
	s.calls = append(s.calls, "write")
	var n int64
	for st.Next() {
		n += st.RecordBatch().NumRows()
	}
	return n, s.writeErr
}

func (s *onceStage) Commit(context.Context, routes.State) error {
	s.calls = append(s.calls, "commit")
	return nil
}

func (s *onceStage) Abort(ctx context.Context) error {
	s.calls = append(s.calls, "abort")
	s.abortCtx = ctx.Err()
	return nil
}

// failingStream is a stream of rows whose Err reports err once drained.
type failingStream struct {
	array.RecordReader
	err error
}

func (f failingStream) Err() error { return f.err }

func onceRows(t *testing.T, n int) array.RecordReader {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := range n {
		b.Append(int64(i))
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(n))
	defer rec.Release()
	rd, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

// TestWriteOnce walks every way out of a one-stream write: commit, the
// empty guard, and each failure (Write, the stream, the checkpoint,
// Commit, a cancelled context), checking the stage is committed exactly
// when it should be and aborted exactly when it is not.
func TestWriteOnce(t *testing.T) {
	errWrite, errStream, errCommit, errHook := errors.New("write failed"), errors.New("stream failed"), errors.New("commit failed"), errors.New("hook failed")
	keepEmpty := func(n int64) bool { return n == 0 }
	cases := []struct {
		name      string
		rows      int
		writeErr  error
		streamErr error
		keep      func(int64) bool
		commitErr error
		noCommit  bool  // Once.Commit nil: the caller commits later
		hookErr   error // the checkpoint hook's error at the phase
		cancel    bool  // the caller's context is cancelled before WriteOnce
		wantCalls string
		wantErr   error
		wantKept  bool
	}{
		{name: "commits", rows: 3, wantCalls: "[write commit]"},
		{name: "commits_zero_rows_without_guard", wantCalls: "[write commit]"},
		{name: "empty_guard_keeps", keep: keepEmpty, wantCalls: "[write abort]", wantKept: true},
		{name: "guard_passes_rows", rows: 1, keep: keepEmpty, wantCalls: "[write commit]"},
		{name: "failed_write_aborts", rows: 2, writeErr: errWrite, keep: keepEmpty, wantCalls: "[write abort]", wantErr: errWrite},
		{name: "failed_stream_aborts", rows: 2, streamErr: errStream, wantCalls: "[write abort]", wantErr: errStream},
		{name: "failed_stream_beats_guard", streamErr: errStream, keep: keepEmpty, wantCalls: "[write abort]", wantErr: errStream},
		{name: "failed_checkpoint_aborts", rows: 2, hookErr: errHook, wantCalls: "[write abort]", wantErr: errHook},
		{name: "failed_commit_aborts", rows: 2, commitErr: errCommit, wantCalls: "[write commit abort]", wantErr: errCommit},
		{name: "cancelled_write_aborts_on_live_context", rows: 2, writeErr: context.Canceled, cancel: true, wantCalls: "[write abort]", wantErr: context.Canceled},
		{name: "no_commit_leaves_stage", rows: 2, noCommit: true, wantCalls: "[write]"},
		{name: "no_commit_aborts_failed_write", rows: 2, writeErr: errWrite, noCommit: true, wantCalls: "[write abort]", wantErr: errWrite},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			const phase = "before-commit"
			var phases []string
			t.Cleanup(routes.SetCheckpointHook(func(p string) error {
				phases = append(phases, p)
				return tc.hookErr
			}))
			st := &onceStage{writeErr: tc.writeErr}
			rd := onceRows(t, tc.rows)
			defer rd.Release()
			o := routes.Once{Keep: tc.keep, Phase: phase}
			if !tc.noCommit {
				o.Commit = func(ctx context.Context, n int64) error {
					st.committed = n
					if err := st.Commit(ctx, routes.State{Rows: n}); err != nil {
						return err
					}
					return tc.commitErr
				}
			}
			n, kept, err := routes.WriteOnce(ctx, st, failingStream{rd, tc.streamErr}, o)
			if got := fmt.Sprint(st.calls); got != tc.wantCalls {
				t.Errorf("calls %s, want %s", got, tc.wantCalls)
			}
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("err %v, want %v", err, tc.wantErr)
			}
			if kept != tc.wantKept {
				t.Errorf("kept %v, want %v", kept, tc.wantKept)
			}
			if n != int64(tc.rows) {
				t.Errorf("rows %d, want %d (what Write wrote, even on a failure)", n, tc.rows)
			}
			if st.abortCtx != nil {
				t.Errorf("Abort ran on a dead context (%v): a cancelled run must still roll back", st.abortCtx)
			}
			if st.committed != 0 && st.committed != int64(tc.rows) {
				t.Errorf("committed %d rows, want %d", st.committed, tc.rows)
			}
			wantPhase := !tc.noCommit && tc.writeErr == nil && tc.streamErr == nil && !tc.wantKept
			if (len(phases) == 1 && phases[0] == phase) != wantPhase || len(phases) > 1 {
				t.Errorf("checkpoints %v, want %q reached: %v", phases, phase, wantPhase)
			}
		})
	}
}
