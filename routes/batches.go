package routes

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
)

// BatchHeadroom: a decoder presizes its builders for the next batch at the
// last batch's rows and bytes plus 1/BatchHeadroom, since a builder that
// outgrows its reservation by one value doubles (a copy, and up to twice
// the memory).
const BatchHeadroom = 8

// Produce decodes a source's wire format and hands each record batch to
// emit, which takes ownership (and releases it itself if ctx ends first).
type Produce func(ctx context.Context, emit func(arrow.RecordBatch) error) error

// Batches is the Arrow side of a Stream: a producer goroutine, started by
// the first Next, decodes the next batch while the consumer encodes the
// current one. The hand-off is unbuffered, so a pipe holds at most two
// batches: the consumer's (released by its next Next, before the hand-off)
// and the one being built or waiting to be taken. Adapters embed *Batches
// in their stream type and give it their decode loop.
type Batches struct {
	ctx     context.Context // the Read call's: RecordReader's methods take none
	schema  *arrow.Schema
	produce Produce

	refs   atomic.Int64
	rows   atomic.Int64
	once   sync.Once
	cancel context.CancelFunc
	ch     chan arrow.RecordBatch
	done   chan struct{}
	err    error // set before done is closed
	cur    arrow.RecordBatch
	halt   error // a checkpoint hook's error: the stream ends with it
}

// NewBatches returns a stream of schema's batches that produce will decode.
func NewBatches(ctx context.Context, schema *arrow.Schema, produce Produce) *Batches {
	b := &Batches{ctx: ctx, schema: schema, produce: produce}
	b.refs.Store(1)
	return b
}

func (b *Batches) Schema() *arrow.Schema          { return b.schema }
func (b *Batches) Retain()                        { b.refs.Add(1) }
func (b *Batches) RecordBatch() arrow.RecordBatch { return b.cur }

// Record is the deprecated name of RecordBatch, kept for the interface.
func (b *Batches) Record() arrow.RecordBatch { return b.cur }

// Rows counts the rows emitted so far; safe from any goroutine.
func (b *Batches) Rows() int64 { return b.rows.Load() }

// Claim takes the stream for another way of reading it (a NativeStream's
// WriteTo): afterwards Next returns false. It is false if Next ran first.
func (b *Batches) Claim() bool {
	claimed := false
	b.once.Do(func() { claimed = true })
	return claimed
}

// Next moves to the next batch; false at the end or on error (see Err).
func (b *Batches) Next() bool {
	b.once.Do(b.start)
	if b.cur != nil && b.halt == nil {
		b.halt = Checkpoint("mid-copy") // the consumer wrote a batch and asks for more
	}
	b.releaseCur()
	if b.ch == nil || b.halt != nil {
		return false // claimed by WriteTo
	}
	rec, ok := <-b.ch
	if !ok {
		<-b.done
		return false
	}
	b.cur = rec
	return true
}

// Err is the producer's error once it has finished.
func (b *Batches) Err() error {
	if b.halt != nil {
		return b.halt
	}
	if b.done == nil {
		return nil
	}
	select {
	case <-b.done:
		return b.err
	default:
		return nil
	}
}

// Release frees the stream at its last reference: stops the producer if it
// is still running and drops undelivered batches.
func (b *Batches) Release() {
	if b.refs.Add(-1) != 0 {
		return
	}
	if b.cancel != nil {
		b.cancel()
		for rec := range b.ch {
			rec.Release()
		}
		<-b.done
	}
	b.releaseCur()
}

func (b *Batches) releaseCur() {
	if b.cur != nil {
		b.cur.Release()
		b.cur = nil
	}
}

func (b *Batches) start() {
	ctx, cancel := context.WithCancel(b.ctx)
	b.cancel = cancel
	b.ch = make(chan arrow.RecordBatch)
	b.done = make(chan struct{})
	go func() {
		defer close(b.done)
		defer close(b.ch)
		b.err = b.produce(ctx, func(rec arrow.RecordBatch) error {
			b.rows.Add(rec.NumRows())
			select {
			case b.ch <- rec:
				return nil
			case <-ctx.Done():
				rec.Release()
				return ctx.Err()
			}
		})
	}()
}

// RecordBytes is the size of a batch's buffers, children and dictionaries
// included (a sliced batch counts its whole buffers: an overestimate).
func RecordBytes(r arrow.RecordBatch) int64 {
	var n int64
	for _, c := range r.Columns() {
		n += dataBytes(c.Data())
	}
	return n
}

func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		n += dataBytes(d.Dictionary())
	}
	return n
}
