package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

// Write encodes the stream's batches into the staging table: one Native
// block per batch on the native protocol, RowBinary bodies over HTTP.
func (st *stage) Write(ctx context.Context, s routes.Stream) (int64, error) {
	cols, encs, err := st.encoders(s.Schema())
	if err != nil {
		return 0, err
	}
	n, err := st.e.conn.insert(ctx, ident(st.table), cols, encs, streamSource(s))
	if err != nil && ctx.Err() != nil {
		return n, ctx.Err()
	}
	return n, err
}

// encoders pairs each stream field with the staging column of its name.
func (st *stage) encoders(schema *arrow.Schema) ([]string, []encoder, error) {
	cols := make([]string, schema.NumFields())
	encs := make([]encoder, schema.NumFields())
	for i, f := range schema.Fields() {
		typ, ok := st.types[f.Name]
		if !ok {
			return nil, nil, &routes.ProbeError{Table: st.dest.String(), Column: f.Name, Problem: "the destination has no such column", Hint: "add it, or use mode replace"}
		}
		enc, err := newEncoder(f.Type, typ, st.e.opts)
		if err != nil {
			return nil, nil, &routes.ProbeError{Table: st.dest.String(), Column: f.Name, Problem: err.Error()}
		}
		cols[i], encs[i] = f.Name, enc
	}
	return cols, encs, nil
}

// AcceptsNative: a ClickHouse source's Native blocks load untouched when
// every staging column has the source column's very type.
func (st *stage) AcceptsNative(format string) bool {
	if format != NativeFormat || !isCHScheme(st.info.Scheme) {
		return false
	}
	for _, c := range st.info.Columns {
		if normType(st.types[c.Name]) != normType(c.NativeType) {
			return false
		}
	}
	return true
}

// WriteNative relays the source's Native bytes into the staging table
// with one HTTP INSERT … FORMAT Native; it declines (ErrNoPassthrough)
// when this server's HTTP interface does not answer.
func (st *stage) WriteNative(ctx context.Context, s routes.NativeStream) (int64, error) {
	c, ok := s.(routes.Counter)
	if !ok || !st.e.relayReady(ctx) {
		return 0, routes.ErrNoPassthrough
	}
	names := make([]string, len(st.info.Columns))
	for i, col := range st.info.Columns {
		names[i] = col.Name
	}
	pr, pw := io.Pipe()
	srcErr := make(chan error, 1)
	go func() {
		_, err := s.WriteTo(pw)
		pw.CloseWithError(err)
		srcErr <- err
	}()
	sql := fmt.Sprintf("INSERT INTO %s (%s) FORMAT Native", ident(st.table), joinIdents(names))
	err := st.e.http.insertBody(ctx, sql, pr)
	pr.CloseWithError(errBodyEnded)
	if serr := <-srcErr; serr != nil && !errors.Is(serr, errBodyEnded) {
		return c.Rows(), serr
	}
	if err != nil {
		return c.Rows(), fmt.Errorf("relay into %s: %w", st.table, err)
	}
	return c.Rows(), nil
}
