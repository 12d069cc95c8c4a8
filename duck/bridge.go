//go:build cgo

package duck

// DuckDB's C Arrow functions, called on the connection duckdb-go opened.
// duckdb-go and duckdb-go-bindings wrap them only under the build tag
// duckdb_arrow (their arrow.go files); the functions themselves are in
// the static library every build links. Declaring the few we need here
// makes the engine work in a plain `go build`. The declarations mirror
// duckdb.h of the pinned DuckDB (duckdb-go-bindings v0.20000.0); handles
// are opaque pointers, and duckdb_result is the one struct passed by value.

/*
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

typedef uint64_t idx_t;
typedef enum { WeirDuckDBSuccess = 0, WeirDuckDBError = 1 } weir_duckdb_state;
typedef struct _duckdb_connection *duckdb_connection;
typedef struct _duckdb_prepared_statement *duckdb_prepared_statement;
typedef struct _duckdb_logical_type *duckdb_logical_type;
typedef struct _duckdb_data_chunk *duckdb_data_chunk;
typedef struct _duckdb_arrow_options *duckdb_arrow_options;
typedef struct _duckdb_error_data *duckdb_error_data;
typedef struct _duckdb_arrow_stream *duckdb_arrow_stream;

typedef struct {
	idx_t deprecated_column_count;
	idx_t deprecated_row_count;
	idx_t deprecated_rows_changed;
	void *deprecated_columns;
	char *deprecated_error_message;
	void *internal_data;
} duckdb_result;

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
struct ArrowSchema {
	const char *format;
	const char *name;
	const char *metadata;
	int64_t flags;
	int64_t n_children;
	struct ArrowSchema **children;
	struct ArrowSchema *dictionary;
	void (*release)(struct ArrowSchema *);
	void *private_data;
};
struct ArrowArray {
	int64_t length;
	int64_t null_count;
	int64_t offset;
	int64_t n_buffers;
	int64_t n_children;
	const void **buffers;
	struct ArrowArray **children;
	struct ArrowArray *dictionary;
	void (*release)(struct ArrowArray *);
	void *private_data;
};
struct ArrowArrayStream {
	int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *);
	int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *);
	const char *(*get_last_error)(struct ArrowArrayStream *);
	void (*release)(struct ArrowArrayStream *);
	void *private_data;
};
#endif

weir_duckdb_state duckdb_prepare(duckdb_connection, const char *, duckdb_prepared_statement *);
const char *duckdb_prepare_error(duckdb_prepared_statement);
void duckdb_destroy_prepare(duckdb_prepared_statement *);
weir_duckdb_state duckdb_execute_prepared_streaming(duckdb_prepared_statement, duckdb_result *);
const char *duckdb_result_error(duckdb_result *);
void duckdb_destroy_result(duckdb_result *);
idx_t duckdb_column_count(duckdb_result *);
const char *duckdb_column_name(duckdb_result *, idx_t);
duckdb_logical_type duckdb_column_logical_type(duckdb_result *, idx_t);
void duckdb_destroy_logical_type(duckdb_logical_type *);
duckdb_data_chunk duckdb_fetch_chunk(duckdb_result);
void duckdb_destroy_data_chunk(duckdb_data_chunk *);
duckdb_arrow_options duckdb_result_get_arrow_options(duckdb_result *);
void duckdb_destroy_arrow_options(duckdb_arrow_options *);
duckdb_error_data duckdb_to_arrow_schema(duckdb_arrow_options, duckdb_logical_type *, const char **, idx_t, struct ArrowSchema *);
duckdb_error_data duckdb_data_chunk_to_arrow(duckdb_arrow_options, duckdb_data_chunk, struct ArrowArray *);
bool duckdb_error_data_has_error(duckdb_error_data);
const char *duckdb_error_data_message(duckdb_error_data);
void duckdb_destroy_error_data(duckdb_error_data *);
weir_duckdb_state duckdb_arrow_scan(duckdb_connection, const char *, duckdb_arrow_stream);
void duckdb_interrupt(duckdb_connection);
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"
	"github.com/duckdb/duckdb-go/v2"
)

// handle is a DuckDB C connection.
type handle = C.duckdb_connection

// cconn is the C connection with a guard: an interrupt (from a context
// that ends later, even after Close) must never reach a closed connection.
type cconn struct {
	mu     sync.Mutex
	h      handle
	closed bool
}

// interrupt stops the connection's running query, unless it is closed.
func (c *cconn) interrupt() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		C.duckdb_interrupt(c.h)
	}
}

// close marks the connection closed: call it before closing it.
func (c *cconn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
}

// connHandle returns the C connection behind a duckdb-go driver connection:
// duckdb-go keeps it in the unexported field conn (a bindings.Connection,
// struct{ Ptr unsafe.Pointer }) and exposes it only through the tagged
// Arrow API. reflect reads it; a different layout fails here, at Open.
func connHandle(dc any) (handle, error) {
	c, ok := dc.(*duckdb.Conn)
	if !ok || c == nil {
		return nil, fmt.Errorf("duckdb: driver connection is %T, not *duckdb.Conn", dc)
	}
	f := reflect.ValueOf(c).Elem().FieldByName("conn")
	if f.Kind() != reflect.Struct {
		return nil, errors.New("duckdb: duckdb-go's Conn has no conn field (its layout changed; see duck/bridge.go)")
	}
	p := f.FieldByName("Ptr")
	if p.Kind() != reflect.UnsafePointer || p.UnsafePointer() == nil {
		return nil, errors.New("duckdb: duckdb-go's Conn.conn has no Ptr (its layout changed; see duck/bridge.go)")
	}
	return handle(p.UnsafePointer()), nil
}

// interruptOnCancel interrupts the connection's running query when ctx
// ends, until stop is called; stop returns once the watcher has exited.
func interruptOnCancel(ctx context.Context, conn *cconn) (stop func()) {
	if ctx.Done() == nil {
		return func() {}
	}
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-ctx.Done():
			conn.interrupt()
		case <-done:
		}
	}()
	return sync.OnceFunc(func() {
		close(done)
		<-exited
	})
}

// errorData turns a duckdb_error_data into an error and destroys it.
func errorData(ed C.duckdb_error_data) error {
	if ed == nil {
		return nil
	}
	defer C.duckdb_destroy_error_data(&ed)
	if !C.duckdb_error_data_has_error(ed) {
		return nil
	}
	return errors.New(C.GoString(C.duckdb_error_data_message(ed)))
}

// queryArrow runs one statement as a streaming query and returns its
// result as Arrow batches, converted chunk by chunk by DuckDB's own
// duckdb_data_chunk_to_arrow (what duckdb-go's tagged QueryContext does).
func queryArrow(ctx context.Context, c *cconn, query string) (array.RecordReader, error) {
	conn := c.h
	q := C.CString(query)
	defer C.free(unsafe.Pointer(q))
	r := &resultReader{ctx: ctx, refs: 1}
	r.stop = interruptOnCancel(ctx, c)
	if C.duckdb_prepare(conn, q, &r.stmt) != C.WeirDuckDBSuccess {
		err := errors.New(C.GoString(C.duckdb_prepare_error(r.stmt)))
		r.free()
		return nil, cancelled(ctx, err)
	}
	r.res = (*C.duckdb_result)(C.calloc(1, C.sizeof_duckdb_result))
	if C.duckdb_execute_prepared_streaming(r.stmt, r.res) != C.WeirDuckDBSuccess {
		err := errors.New(C.GoString(C.duckdb_result_error(r.res)))
		r.free()
		return nil, cancelled(ctx, err)
	}
	r.opts = C.duckdb_result_get_arrow_options(r.res)
	schema, err := r.arrowSchema()
	if err != nil {
		r.free()
		return nil, err
	}
	r.schema = schema
	return r, nil
}

// cancelled prefers the context's error to DuckDB's "Interrupted".
func cancelled(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}

// resultReader is an array.RecordReader over a streaming DuckDB result.
type resultReader struct {
	ctx    context.Context
	stop   func()
	stmt   C.duckdb_prepared_statement
	res    *C.duckdb_result
	opts   C.duckdb_arrow_options
	schema *arrow.Schema

	mu   sync.Mutex
	refs int64
	cur  arrow.RecordBatch
	err  error
	done bool
}

var _ array.RecordReader = (*resultReader)(nil)

func (r *resultReader) arrowSchema() (*arrow.Schema, error) {
	n := C.duckdb_column_count(r.res)
	names := unsafe.Slice((**C.char)(C.calloc(C.size_t(max(n, 1)), C.size_t(unsafe.Sizeof((*C.char)(nil))))), n)
	types := unsafe.Slice((*C.duckdb_logical_type)(C.calloc(C.size_t(max(n, 1)), C.size_t(unsafe.Sizeof(C.duckdb_logical_type(nil))))), n)
	defer func() {
		for i := range types {
			C.duckdb_destroy_logical_type(&types[i])
		}
		C.free(unsafe.Pointer(unsafe.SliceData(types)))
		C.free(unsafe.Pointer(unsafe.SliceData(names)))
	}()
	for i := range n {
		names[i] = C.duckdb_column_name(r.res, i) // owned by the result
		types[i] = C.duckdb_column_logical_type(r.res, i)
	}
	cs := (*C.struct_ArrowSchema)(C.calloc(1, C.sizeof_struct_ArrowSchema))
	defer func() {
		cdata.ReleaseCArrowSchema((*cdata.CArrowSchema)(unsafe.Pointer(cs)))
		C.free(unsafe.Pointer(cs))
	}()
	if err := errorData(C.duckdb_to_arrow_schema(r.opts, unsafe.SliceData(types), unsafe.SliceData(names), n, cs)); err != nil {
		return nil, fmt.Errorf("duckdb: arrow schema: %w", err)
	}
	s, err := cdata.ImportCArrowSchema((*cdata.CArrowSchema)(unsafe.Pointer(cs)))
	if err != nil {
		return nil, fmt.Errorf("duckdb: arrow schema: %w", err)
	}
	return s, nil
}

func (r *resultReader) Schema() *arrow.Schema { return r.schema }

func (r *resultReader) Next() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.done || r.err != nil || r.res == nil {
		return false
	}
	if err := r.ctx.Err(); err != nil {
		r.err = err
		return false
	}
	chunk := C.duckdb_fetch_chunk(*r.res)
	if chunk == nil {
		r.done = true
		if msg := C.duckdb_result_error(r.res); msg != nil {
			r.err = cancelled(r.ctx, fmt.Errorf("duckdb: %s", C.GoString(msg)))
		}
		return false
	}
	defer C.duckdb_destroy_data_chunk(&chunk)
	ca := (*C.struct_ArrowArray)(C.calloc(1, C.sizeof_struct_ArrowArray))
	defer func() {
		cdata.ReleaseCArrowArray((*cdata.CArrowArray)(unsafe.Pointer(ca)))
		C.free(unsafe.Pointer(ca))
	}()
	if err := errorData(C.duckdb_data_chunk_to_arrow(r.opts, chunk, ca)); err != nil {
		r.err = fmt.Errorf("duckdb: arrow array: %w", err)
		return false
	}
	rec, err := cdata.ImportCRecordBatchWithSchema((*cdata.CArrowArray)(unsafe.Pointer(ca)), r.schema)
	if err != nil {
		r.err = fmt.Errorf("duckdb: arrow array: %w", err)
		return false
	}
	r.cur = rec
	return true
}

func (r *resultReader) RecordBatch() arrow.RecordBatch {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur
}

// Record is RecordBatch (the older name in array.RecordReader).
func (r *resultReader) Record() arrow.RecordBatch { return r.RecordBatch() }

func (r *resultReader) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *resultReader) Retain() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refs > 0 {
		r.refs++
	}
}

func (r *resultReader) Release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refs <= 0 {
		return
	}
	if r.refs--; r.refs > 0 {
		return
	}
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	r.free()
}

// free destroys the C objects (each once).
func (r *resultReader) free() {
	if r.opts != nil {
		C.duckdb_destroy_arrow_options(&r.opts)
	}
	if r.res != nil {
		C.duckdb_destroy_result(r.res)
		C.free(unsafe.Pointer(r.res))
		r.res = nil
	}
	if r.stmt != nil {
		C.duckdb_destroy_prepare(&r.stmt)
	}
	r.stop()
}

// registerArrowView exports r as an Arrow C stream and registers it as
// the view name (duckdb_arrow_scan). The returned func releases the stream.
func registerArrowView(c *cconn, name string, r array.RecordReader) (release func(), err error) {
	conn := c.h
	stream := C.calloc(1, C.sizeof_struct_ArrowArrayStream)
	release = func() {
		cdata.ReleaseCArrowArrayStream((*cdata.CArrowArrayStream)(stream))
		C.free(stream)
	}
	cdata.ExportRecordReader(r, (*cdata.CArrowArrayStream)(stream))
	n := C.CString(name)
	defer C.free(unsafe.Pointer(n))
	if C.duckdb_arrow_scan(conn, n, C.duckdb_arrow_stream(stream)) != C.WeirDuckDBSuccess {
		release()
		return nil, errors.New("duckdb_arrow_scan failed")
	}
	return release, nil
}
