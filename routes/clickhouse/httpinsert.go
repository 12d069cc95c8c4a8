package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/ClickHouse/ch-go/proto"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/klauspost/compress/gzip"

	"github.com/weirhq/weir/routes"
)

// insert streams the batches as gzip'd INSERT bodies in RowBinary (or
// Native, with http_format=Native), starting a new request whenever a body
// reaches max_body_bytes on the wire. Each request is its own INSERT: the
// staging table makes the parts one load.
func (h *httpConn) insert(ctx context.Context, table string, cols []string, encs []encoder, next batchSource) (int64, error) {
	sql := fmt.Sprintf("INSERT INTO %s (%s) FORMAT %s", table, joinIdents(cols), h.opts.HTTPFormat)
	cur := &rowCursor{next: next, encs: encs, cols: cols}
	defer cur.release()
	var total int64
	for {
		n, more, err := h.insertPart(ctx, sql, cur)
		total += n
		if err != nil {
			return total, fmt.Errorf("insert into %s: %w", table, err)
		}
		if !more {
			return total, nil
		}
	}
}

var errBodyEnded = errors.New("request ended before its body")

type partResult struct {
	rows int64
	more bool
	err  error
}

// insertPart sends one request; more reports rows are left for the next.
func (h *httpConn) insertPart(ctx context.Context, sql string, cur *rowCursor) (int64, bool, error) {
	pr, pw := io.Pipe()
	done := make(chan partResult, 1)
	go func() {
		r := h.writeBody(pw, cur)
		pw.CloseWithError(r.err)
		done <- r
	}()
	resp, err := h.post(ctx, url.Values{"query": {sql}}, pr, true)
	pr.CloseWithError(errBodyEnded)
	r := <-done
	if r.err != nil && !errors.Is(r.err, errBodyEnded) {
		return 0, false, r.err
	}
	if err != nil {
		return 0, false, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return r.rows, r.more, nil
}

// writeBody gzips rows into w until the batches end or the body is full.
func (h *httpConn) writeBody(w io.Writer, cur *rowCursor) partResult {
	wire := &routes.CountingWriter{W: w}
	zw, _ := gzip.NewWriterLevel(wire, gzip.BestSpeed)
	limit := h.opts.MaxBodyBytes - min(h.opts.MaxBodyBytes/4, 1<<20) // room for what gzip still buffers
	full := func() bool { return h.opts.MaxBodyBytes > 0 && wire.N >= limit }
	var r partResult
	if h.opts.HTTPFormat == "Native" {
		r = cur.writeBlocks(zw, full)
	} else {
		r = cur.writeRows(zw, full)
	}
	if r.err == nil {
		r.err = zw.Close()
	}
	return r
}

// rowCursor walks the batches of one insert across its requests.
type rowCursor struct {
	next  batchSource
	encs  []encoder
	cols  []string
	batch arrow.RecordBatch
	binds []valueFunc
	row   int
}

// load makes sure a batch with rows left is current; false at the end.
func (c *rowCursor) load() (bool, error) {
	if c.batch != nil && c.row < int(c.batch.NumRows()) {
		return true, nil
	}
	c.release()
	b, err := nextNonEmpty(c.next)
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	c.batch, c.row = b, 0
	c.binds = make([]valueFunc, len(c.encs))
	for i, e := range c.encs {
		c.binds[i] = e.bind(b.Column(i))
	}
	return true, nil
}

func (c *rowCursor) release() {
	if c.batch != nil {
		c.batch.Release()
		c.batch = nil
	}
}

const flushBytes = 64 << 10

// writeRows writes RowBinary rows, checking full between 64 KiB chunks.
func (c *rowCursor) writeRows(w io.Writer, full func() bool) partResult {
	var r partResult
	buf := make([]byte, 0, 2*flushBytes)
	for {
		ok, err := c.load()
		if err != nil || !ok {
			_, werr := w.Write(buf)
			return partResult{rows: r.rows, err: errors.Join(err, werr)}
		}
		for ; c.row < int(c.batch.NumRows()); c.row++ {
			if buf, err = c.encodeRow(buf, c.row); err != nil {
				return partResult{err: err}
			}
			r.rows++
			if len(buf) < flushBytes {
				continue
			}
			if _, err := w.Write(buf); err != nil {
				return partResult{err: err}
			}
			if buf = buf[:0]; full() {
				c.row++
				return partResult{rows: r.rows, more: true}
			}
		}
	}
}

func (c *rowCursor) encodeRow(buf []byte, row int) ([]byte, error) {
	var err error
	for j, f := range c.binds {
		if buf, err = f(buf, row); err != nil {
			return buf, &routes.ValueError{Column: c.cols[j], Err: err}
		}
	}
	return buf, nil
}

// writeBlocks writes one Native block per batch (a batch is never split).
func (c *rowCursor) writeBlocks(w io.Writer, full func() bool) partResult {
	var r partResult
	ics := make([]*inputCol, len(c.encs))
	in := make([]proto.InputColumn, len(c.encs))
	for i, e := range c.encs {
		ics[i] = &inputCol{typ: proto.ColumnType(e.chType())}
		in[i] = proto.InputColumn{Name: c.cols[i], Data: ics[i]}
	}
	var buf proto.Buffer
	for !full() {
		n, err := fillBlock(ics, c.cols, c.encs, c.next)
		if errors.Is(err, io.EOF) {
			return r
		}
		if err != nil {
			return partResult{err: err}
		}
		buf.Reset()
		if err := (proto.Block{Columns: len(in), Rows: int(n)}).EncodeRawBlock(&buf, 0, in); err != nil {
			return partResult{err: err}
		}
		if _, err := w.Write(buf.Buf); err != nil {
			return partResult{err: err}
		}
		r.rows += n
	}
	r.more = true
	return r
}
