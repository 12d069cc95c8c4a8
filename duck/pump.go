package duck

import (
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// pump reads a record reader in a goroutine of its own and hands the
// batches over a channel. DuckDB pulls an exported stream from its own
// threads through cgo callbacks (locked OS threads); a Go stream that is an
// iter.Pull coroutine (the Iceberg route's) must not be resumed there, so
// the callback only receives from the channel. One batch is read ahead.
type pump struct {
	src    array.RecordReader
	schema *arrow.Schema
	ch     chan arrow.RecordBatch
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	refs   atomic.Int64
	cur    arrow.RecordBatch
	err    error // set before ch closes
}

func newPump(src array.RecordReader) *pump {
	p := &pump{src: src, schema: src.Schema(), ch: make(chan arrow.RecordBatch, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	p.refs.Store(1)
	go p.run()
	return p
}

func (p *pump) run() {
	defer close(p.done)
	defer close(p.ch)
	for p.src.Next() {
		rec := p.src.RecordBatch()
		rec.Retain()
		select {
		case p.ch <- rec:
		case <-p.stop:
			rec.Release()
			return
		}
	}
	p.err = p.src.Err()
}

func (p *pump) Schema() *arrow.Schema { return p.schema }
func (p *pump) Retain()               { p.refs.Add(1) }

// Next takes the next batch from the reading goroutine.
func (p *pump) Next() bool {
	if p.cur != nil {
		p.cur.Release()
		p.cur = nil
	}
	rec, ok := <-p.ch
	if !ok {
		<-p.done // p.err is set
		return false
	}
	p.cur = rec
	return true
}

func (p *pump) RecordBatch() arrow.RecordBatch { return p.cur }

// Record is the deprecated name of RecordBatch.
func (p *pump) Record() arrow.RecordBatch { return p.cur }

// Err is the source's error once the batches are drained.
func (p *pump) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// Release stops the reading goroutine and releases the source at the last
// reference.
func (p *pump) Release() {
	if p.refs.Add(-1) != 0 {
		return
	}
	p.once.Do(func() {
		close(p.stop)
		for rec := range p.ch {
			rec.Release()
		}
		<-p.done
		if p.cur != nil {
			p.cur.Release()
			p.cur = nil
		}
		p.src.Release()
	})
}
