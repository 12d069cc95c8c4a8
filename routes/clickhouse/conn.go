package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ClickHouse/ch-go"
	"github.com/ClickHouse/ch-go/proto"
	"github.com/apache/arrow-go/v18/arrow"
)

// conn is one transport to a server: the native protocol or HTTP. Both are
// safe for concurrent use (pooled connections).
type conn interface {
	// exec runs a statement that returns no rows.
	exec(ctx context.Context, sql string) error
	// query runs a SELECT and feeds every result block to s.
	query(ctx context.Context, sql string, s sink) error
	// insert loads the batches next yields into table's columns, encoded
	// by encs (one per column), and returns the rows sent.
	insert(ctx context.Context, table string, cols []string, encs []encoder, next batchSource) (int64, error)
	close() error
}

// sink receives a query's result: it decodes each block's columns (as a
// ch-go proto.Result) and is told when a block is complete.
type sink interface {
	proto.Result
	blockDone(ctx context.Context) error
}

// batchSource yields the next record batch to insert, or io.EOF. The
// caller releases each batch it gets.
type batchSource func() (arrow.RecordBatch, error)

// Server error codes weir branches on.
const (
	codeUnknownTable       = 60
	codeTableAlreadyExists = 57
	codeUnknownDatabase    = 81
)

// serverError is an exception the server sent over HTTP; native ones are
// ch-go's *ch.Exception.
type serverError struct {
	Code    int
	Message string
}

func (e *serverError) Error() string { return fmt.Sprintf("code %d: %s", e.Code, e.Message) }

// errorCode returns the server's exception code carried by err, or 0.
func errorCode(err error) int {
	if ex, ok := ch.AsException(err); ok {
		return int(ex.Code)
	}
	var se *serverError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// stmtName is the first words of a statement, for error context.
func stmtName(sql string) string {
	f := strings.Fields(sql)
	if len(f) > 3 {
		f = f[:3]
	}
	return strings.Join(f, " ")
}

// queryStrings runs a query whose columns are all String (metadata
// queries wrap what they select in toString) and returns its rows.
func queryStrings(ctx context.Context, c conn, sql string) ([][]string, error) {
	var s stringRows
	if err := c.query(ctx, sql, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", stmtName(sql), err)
	}
	return s.rows, nil
}

// queryRow returns the first row of queryStrings, and false if there is none.
func queryRow(ctx context.Context, c conn, sql string) ([]string, bool, error) {
	rows, err := queryStrings(ctx, c, sql)
	if err != nil || len(rows) == 0 {
		return nil, false, err
	}
	return rows[0], true, nil
}

// stringRows collects a result of String columns.
type stringRows struct{ rows [][]string }

func (s *stringRows) DecodeResult(r *proto.Reader, version int, b proto.Block) error {
	start := len(s.rows)
	for range b.Rows {
		s.rows = append(s.rows, make([]string, b.Columns))
	}
	for i := range b.Columns {
		name, typ, err := readColumnHeader(r, version)
		if err != nil {
			return err
		}
		if typ != "String" {
			return fmt.Errorf("column %s is %s, want String", name, typ)
		}
		for j := range b.Rows {
			if s.rows[start+j][i], err = r.Str(); err != nil {
				return fmt.Errorf("column %s: %w", name, err)
			}
		}
	}
	return nil
}

func (s *stringRows) blockDone(context.Context) error { return nil }

// readColumnHeader reads a Native column's name and type (and, on new
// protocols, the custom-serialization flag weir does not support).
func readColumnHeader(r *proto.Reader, version int) (name, typ string, err error) {
	if name, err = r.Str(); err != nil {
		return "", "", fmt.Errorf("column name: %w", err)
	}
	if typ, err = r.Str(); err != nil {
		return "", "", fmt.Errorf("column %s type: %w", name, err)
	}
	if proto.FeatureCustomSerialization.In(version) {
		custom, err := r.Bool()
		if err != nil || custom {
			return "", "", fmt.Errorf("column %s: custom serialization unsupported (%v)", name, err)
		}
	}
	return name, typ, nil
}
