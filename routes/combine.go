package routes

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"golang.org/x/sync/errgroup"
)

// The stream combinators: Batches (batches.go) is one range's stream;
// Serial joins a plan's ranges one after another (incremental reads, in
// cursor order), Parallel merges pipes that run at once (weir.Read).

// Serial reads ranges of a source one after another as one Stream, opening
// each only when the previous one ends, and counts the rows it delivers.
type Serial struct {
	ctx    context.Context
	src    Source
	ranges []Range
	opts   ReadOptions
	cur    Stream
	schema *arrow.Schema
	refs   atomic.Int64
	rows   atomic.Int64
	err    error
}

// NewSerial opens the first of ranges (there must be one) with opts.
func NewSerial(ctx context.Context, src Source, ranges []Range, opts ReadOptions) (*Serial, error) {
	if len(ranges) == 0 {
		return nil, fmt.Errorf("plan returned no range")
	}
	s := &Serial{ctx: ctx, src: src, ranges: ranges, opts: opts}
	s.refs.Store(1)
	if err := s.openNext(); err != nil {
		return nil, err
	}
	s.schema = s.cur.Schema()
	return s, nil
}

func (s *Serial) openNext() error {
	r := s.ranges[0]
	s.ranges = s.ranges[1:]
	st, err := s.src.Read(s.ctx, r, s.opts)
	if err != nil {
		return fmt.Errorf("read %s: %w", r.Label, err)
	}
	s.cur = st
	return nil
}

func (s *Serial) Schema() *arrow.Schema { return s.schema }
func (s *Serial) Retain()               { s.refs.Add(1) }

// Rows counts the rows delivered so far; safe from any goroutine.
func (s *Serial) Rows() int64 { return s.rows.Load() }

// Release frees the open range's stream at the last reference.
func (s *Serial) Release() {
	if s.refs.Add(-1) == 0 && s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
}

// Next moves to the next batch, across ranges.
func (s *Serial) Next() bool {
	for s.cur != nil && s.err == nil {
		if s.cur.Next() {
			s.rows.Add(s.cur.RecordBatch().NumRows())
			return true
		}
		if s.err = s.cur.Err(); s.err != nil || len(s.ranges) == 0 {
			return false
		}
		s.cur.Release()
		s.cur = nil
		s.err = s.openNext()
	}
	return false
}

func (s *Serial) RecordBatch() arrow.RecordBatch {
	if s.cur == nil {
		return nil
	}
	return s.cur.RecordBatch()
}

// Record is the deprecated name of RecordBatch.
func (s *Serial) Record() arrow.RecordBatch { return s.RecordBatch() }

func (s *Serial) Err() error {
	if s.err == nil && s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	return s.err
}

var _ Stream = (*Serial)(nil)

// Parallel merges pipes that run at once into one Stream: at most limit
// run together, each handing its batches to the reader through a channel
// of one slot per pipe, so at most one batch per pipe is in flight.
// Batches arrive in no particular order. Err is the first pipe's error (or
// the context's).
type Parallel struct {
	schema    *arrow.Schema
	batches   chan arrow.RecordBatch
	cancel    context.CancelFunc
	done      chan struct{}
	once      sync.Once
	err       error // set before batches is closed
	cur       arrow.RecordBatch
	refs      atomic.Int64
	rows      atomic.Int64
	onRelease func()
}

// NewParallel starts the pipes, each a Produce of schema's batches whose
// emit takes ownership of a batch. onRelease (may be nil) runs at the last
// Release, after the pipes stopped: the place to close their source.
func NewParallel(ctx context.Context, schema *arrow.Schema, limit int, pipes []Produce, onRelease func()) *Parallel {
	ctx, cancel := context.WithCancel(ctx)
	m := &Parallel{schema: schema, batches: make(chan arrow.RecordBatch, limit), cancel: cancel,
		done: make(chan struct{}), onRelease: onRelease}
	m.refs.Store(1)
	go func() {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(limit)
		for _, p := range pipes {
			g.Go(func() error { return p(gctx, m.emitter(gctx)) })
		}
		err := g.Wait()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		m.finish(err)
	}()
	return m
}

// emitter hands a pipe's batch to the reader, or releases it when ctx ends.
func (m *Parallel) emitter(ctx context.Context) func(arrow.RecordBatch) error {
	return func(rec arrow.RecordBatch) error {
		select {
		case m.batches <- rec:
			return nil
		case <-ctx.Done():
			rec.Release()
			return ctx.Err()
		}
	}
}

func (m *Parallel) finish(err error) {
	m.err = err
	close(m.batches)
	close(m.done)
}

func (m *Parallel) Schema() *arrow.Schema          { return m.schema }
func (m *Parallel) RecordBatch() arrow.RecordBatch { return m.cur }
func (m *Parallel) Record() arrow.RecordBatch      { return m.cur }
func (m *Parallel) Retain()                        { m.refs.Add(1) }

// Rows counts the rows delivered so far; safe from any goroutine.
func (m *Parallel) Rows() int64 { return m.rows.Load() }

// Next waits for the next batch from any pipe.
func (m *Parallel) Next() bool {
	m.releaseCur()
	b, ok := <-m.batches
	if !ok {
		return false
	}
	m.cur = b
	m.rows.Add(b.NumRows())
	return true
}

// Err is the first pipe's error (or the context's), once Next is false.
func (m *Parallel) Err() error {
	select {
	case <-m.done:
		return m.err
	default:
		return nil
	}
}

// Release, at the last reference, stops the pipes, drops undelivered
// batches and runs onRelease.
func (m *Parallel) Release() {
	if m.refs.Add(-1) != 0 {
		return
	}
	m.stop()
	if m.onRelease != nil {
		m.onRelease()
	}
}

func (m *Parallel) releaseCur() {
	if m.cur != nil {
		m.cur.Release()
		m.cur = nil
	}
}

func (m *Parallel) stop() {
	m.once.Do(func() {
		m.cancel()
		for b := range m.batches {
			b.Release()
		}
		<-m.done
		m.releaseCur()
	})
}

var _ Stream = (*Parallel)(nil)
