package bigquery

import (
	"context"
	"errors"
	"fmt"

	bq "cloud.google.com/go/bigquery"
	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/api/iterator"

	"github.com/weirhq/weir/routes"
)

// BigQuery is a destination only: it is a routes.Prober and a
// CursorSource, never a Source, so that an append or merge with no saved
// state resumes from the rows already in a table.

// Probe returns a destination table's columns, so an append or merge with
// no saved state resumes from its cursor's maximum.
func (e *Endpoint) Probe(ctx context.Context, table routes.TableRef) (*routes.TableInfo, error) {
	ref, err := e.ref(table)
	if err != nil {
		return nil, err
	}
	md, err := e.tableMeta(ctx, ref)
	if err != nil {
		return nil, err
	}
	if md == nil {
		return nil, fmt.Errorf("bigquery table %s.%s: %w", e.cfg.Project, ref, routes.ErrNotFound)
	}
	info := &routes.TableInfo{Scheme: Scheme, SourceID: e.url.Identity() + "#" + ref.String(), Ref: ref, RowEstimate: int64(md.NumRows)}
	for _, f := range md.Schema {
		info.Columns = append(info.Columns, routes.Column{Name: f.Name, Type: arrowType(f), Nullable: !f.Required, NativeType: string(f.Type)})
	}
	return info, nil
}

// arrowType is the Arrow type a BigQuery column reads as.
func arrowType(f *bq.FieldSchema) arrow.DataType {
	t, ok := map[bq.FieldType]arrow.DataType{
		bq.IntegerFieldType: arrow.PrimitiveTypes.Int64, bq.FloatFieldType: arrow.PrimitiveTypes.Float64,
		bq.BooleanFieldType: arrow.FixedWidthTypes.Boolean, bq.BytesFieldType: arrow.BinaryTypes.Binary,
		bq.DateFieldType: arrow.FixedWidthTypes.Date32, bq.TimeFieldType: arrow.FixedWidthTypes.Time64us,
		bq.TimestampFieldType: tsUTC, bq.DateTimeFieldType: tsLocal,
		bq.NumericFieldType: &arrow.Decimal128Type{Precision: 38, Scale: 9},
	}[f.Type]
	if !ok {
		t = arrow.BinaryTypes.String
	}
	if f.Repeated {
		return arrow.ListOf(t)
	}
	return t
}

// MaxCursor returns the cursor column's maximum as weir's cursor text:
// integers and decimals as digits, times as 2006-01-02 15:04:05.000000 in
// UTC ("+00" appended for TIMESTAMP), as the SQL sources print theirs.
func (e *Endpoint) MaxCursor(ctx context.Context, info *routes.TableInfo, cursor string) (string, bool, error) {
	c, ok := info.Column(cursor)
	if !ok {
		return "", false, fmt.Errorf("%s has no column %q", info.Ref, cursor)
	}
	it, err := e.client.Query(fmt.Sprintf("SELECT %s FROM %s", maxText(c, quoteIdent(cursor)), e.ident(info.Ref))).Read(ctx)
	if err != nil {
		return "", false, fmt.Errorf("max of %s.%s: %w", info.Ref, cursor, err)
	}
	var row []bq.Value
	if err := it.Next(&row); err != nil && !errors.Is(err, iterator.Done) {
		return "", false, fmt.Errorf("max of %s.%s: %w", info.Ref, cursor, err)
	}
	if len(row) == 0 || row[0] == nil {
		return "", false, nil
	}
	s, _ := row[0].(string)
	if bq.FieldType(c.NativeType) == bq.TimestampFieldType {
		s += "+00" // appended here: the emulator's FORMAT_TIMESTAMP drops a literal '+'
	}
	return s, true, nil
}

// NullCount counts the rows whose column is NULL.
func (e *Endpoint) NullCount(ctx context.Context, info *routes.TableInfo, column string) (int64, error) {
	q := fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE %s IS NULL", e.ident(info.Ref), quoteIdent(column))
	it, err := e.client.Query(q).Read(ctx)
	if err != nil {
		return 0, fmt.Errorf("NULLs of %s.%s: %w", info.Ref, column, err)
	}
	var row []bq.Value
	if err := it.Next(&row); err != nil {
		return 0, fmt.Errorf("NULLs of %s.%s: %w", info.Ref, column, err)
	}
	n, ok := row[0].(int64)
	if !ok {
		return 0, fmt.Errorf("NULLs of %s.%s: count is %T", info.Ref, column, row[0])
	}
	return n, nil
}

func maxText(c routes.Column, col string) string {
	switch bq.FieldType(c.NativeType) {
	case bq.TimestampFieldType:
		return fmt.Sprintf("FORMAT_TIMESTAMP('%%Y-%%m-%%d %%H:%%M:%%E6S', MAX(%s), 'UTC')", col)
	case bq.DateTimeFieldType:
		return fmt.Sprintf("FORMAT_DATETIME('%%Y-%%m-%%d %%H:%%M:%%E6S', MAX(%s))", col)
	}
	return fmt.Sprintf("CAST(MAX(%s) AS STRING)", col)
}
