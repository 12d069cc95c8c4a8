package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/stream"
)

// A stream task with table: reads a SQL table in keyset chunks
// (stream.Table, docs/streams.md): each chunk is one batch, loaded into
// the engine as Arrow straight from the source's read (no JSON: column
// types are kept), checked, written and committed with the key of the
// chunk's last row as the task's cursor. A killed run starts again after
// the last committed chunk.

// chunkTable holds a chunk as the source read it, before the bookkeeping
// columns are added.
const chunkTable = "_weir_chunk"

// openTableSource opens the task's table source and probes the table.
func (r *Runner) openTableSource(ctx context.Context, t *dagfile.Task, raw string) (stream.Source, error) {
	s := t.Stream
	ref, err := routes.ParseTableRef(s.Table)
	if err != nil {
		return nil, routes.BadInput("stream %s: table %q: %v", t.Name, s.Table, err)
	}
	src, err := stream.OpenTable(ctx, raw, stream.TableOptions{Table: ref, Cursor: s.Cursor,
		ChunkSize: cmpOrInt(s.ChunkSize, DefaultBatchSize), Allocator: r.opts.Allocator})
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", t.Name, err)
	}
	return src, nil
}

// chunkLoop commits one chunk per batch until the table is read to its
// current end (available_now) or ctx ends (continuous: it polls every
// batch_interval). A chunk being read when ctx ends is dropped, not
// committed: the next run reads it again from the sink's cursor.
func (run *streamRun) chunkLoop(ctx context.Context, cs stream.ChunkSource) error {
	for {
		n, err := run.loadChunk(ctx, cs)
		if ctx.Err() != nil {
			run.dropTemp(context.WithoutCancel(ctx))
			return nil
		}
		if err != nil {
			run.dropTemp(context.WithoutCancel(ctx))
			return fmt.Errorf("stream %s: %w", run.t.Name, err)
		}
		if err := routes.Checkpoint("poll"); err != nil {
			run.dropTemp(context.WithoutCancel(ctx))
			return fmt.Errorf("stream %s: %w", run.t.Name, err)
		}
		if n < 0 {
			if run.s.Trigger != "continuous" {
				return nil
			}
			if err := stream.Sleep(ctx, run.interval); err != nil {
				return nil
			}
			continue
		}
		// The chunk is written and committed even when ctx ends (SIGTERM),
		// within a grace period counted from the signal: a big chunk may
		// take longer than that to write.
		wctx, cancel := graceful(ctx, routes.AbortTimeout+run.interval)
		run.chunkReplayed(cs.Cursor())
		err = run.commitLoaded(wctx, cs.Cursor(), n)
		run.forgetReplayed()
		run.dropTemp(wctx)
		cancel()
		if err != nil || ctx.Err() != nil {
			return err
		}
	}
}

// chunkReplayed: a chunk that ends at a quarantined cursor the sink's did
// not reach (a crash between the two commits) is the chunk quarantined
// then, read again (the same keys from the same cursor): none of its rows
// is quarantined again. A chunk that ends elsewhere (the table changed in
// between) is quarantined as it is: at-least-once.
func (run *streamRun) chunkReplayed(cursor string) {
	run.replayAll = slices.Contains(run.replay, cursor)
	run.replay = nil
}

// loadChunk reads the next chunk into outTable with the bookkeeping
// columns of a flattened batch: _weir_raw (the row as JSON, for the
// quarantine), _weir_error (NULL) and _weir_seq (the row's place in the
// chunk). It returns the rows loaded, -1 when the table has no row past
// the cursor.
func (run *streamRun) loadChunk(ctx context.Context, cs stream.ChunkSource) (int64, error) {
	rd, err := cs.NextChunk(ctx)
	if err != nil || rd == nil {
		return -1, err
	}
	defer rd.Release()
	if _, err := run.db.Load(ctx, chunkTable, rd); err != nil {
		return 0, err
	}
	if err := rd.Err(); err != nil {
		return 0, err
	}
	if run.cols == nil {
		for _, f := range rd.Schema().Fields() {
			run.cols = append(run.cols, f.Name)
		}
	}
	for _, c := range run.cols {
		if strings.HasPrefix(c, "_weir_") {
			return 0, routes.BadInput("table column %q: names starting with _weir_ are weir's bookkeeping columns", c)
		}
	}
	if err := run.bookkeep(ctx); err != nil {
		return 0, fmt.Errorf("chunk of %s: %w", run.s.Table, err)
	}
	return run.db.Count(ctx, outTable)
}

// bookkeep makes outTable from chunkTable with the bookkeeping columns.
func (run *streamRun) bookkeep(ctx context.Context) error {
	q := fmt.Sprintf(`CREATE OR REPLACE TEMP TABLE %[1]s AS SELECT *, to_json(%[2]s)::VARCHAR AS %[3]s, NULL::VARCHAR AS %[4]s,
  (row_number() OVER () - 1)::BIGINT AS %[5]s FROM %[2]s`,
		outTable, duck.Ident(chunkTable), rawColumn, errorColumn, seqColumn)
	return run.db.Exec(ctx, q)
}

// graceful returns a context that ends grace after ctx does.
func graceful(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(grace, cancel) })
	return wctx, func() {
		stop()
		cancel()
	}
}
