package bigquery

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// convert returns rec with its columns converted to the layout's staged
// types; the caller still owns (and releases) rec.
func (l layout) convert(ctx context.Context, rec arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, col := range rec.Columns() {
		var err error
		if cols[i], err = convertArray(ctx, col, l.arrow.Field(i).Type, mem); err != nil {
			return nil, fmt.Errorf("column %s: %w", l.arrow.Field(i).Name, err)
		}
	}
	return array.NewRecordBatch(l.arrow, cols, rec.NumRows()), nil
}

// convertArray converts arr to dst: a cast where Arrow has one (integers
// widen, uint64 becomes decimal(20,0), temporal units become
// microseconds), text for what BigQuery has no Parquet form of, and
// element- or field-wise for lists and structs.
func convertArray(ctx context.Context, arr arrow.Array, dst arrow.DataType, mem memory.Allocator) (arrow.Array, error) {
	src := arr.DataType()
	switch {
	case arrow.TypeEqual(src, dst):
		arr.Retain()
		return arr, nil
	case arrow.TypeEqual(dst, jsonType):
		return jsonArray(ctx, arr, mem)
	case dst.ID() == arrow.STRING && !isText(src):
		return textArray(arr, mem)
	case dst.ID() == arrow.LIST:
		return convertList(ctx, arr, dst.(*arrow.ListType), mem)
	case dst.ID() == arrow.STRUCT:
		return convertStruct(ctx, arr.(*array.Struct), dst.(*arrow.StructType), mem)
	}
	if ext, ok := arr.(array.ExtensionArray); ok {
		return convertArray(ctx, ext.Storage(), dst, mem)
	}
	// Sub-microsecond digits are cut: BigQuery keeps microseconds.
	out, err := compute.CastArray(compute.WithAllocator(ctx, mem), arr, compute.UnsafeCastOptions(dst))
	if err != nil {
		return nil, fmt.Errorf("cast %s to %s: %w", src, dst, err)
	}
	return out, nil
}

func isText(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return true
	}
	return false
}

// jsonArray wraps a string column in the JSON extension type, so Parquet
// marks it JSON.
func jsonArray(ctx context.Context, arr arrow.Array, mem memory.Allocator) (arrow.Array, error) {
	if ext, ok := arr.(array.ExtensionArray); ok {
		arr = ext.Storage()
	}
	str, err := convertArray(ctx, arr, arrow.BinaryTypes.String, mem)
	if err != nil {
		return nil, err
	}
	defer str.Release()
	return array.NewExtensionArrayWithStorage(jsonType, str), nil
}

// convertList converts a list's values and rebuilds it with dst's type
// over the same offsets (large lists are cast to lists first).
func convertList(ctx context.Context, arr arrow.Array, dst *arrow.ListType, mem memory.Allocator) (arrow.Array, error) {
	if arr.DataType().ID() != arrow.LIST {
		lt := arrow.ListOf(arr.DataType().(arrow.ListLikeType).Elem())
		cast, err := compute.CastArray(compute.WithAllocator(ctx, mem), arr, compute.SafeCastOptions(lt))
		if err != nil {
			return nil, fmt.Errorf("cast %s to %s: %w", arr.DataType(), lt, err)
		}
		defer cast.Release()
		arr = cast
	}
	list := arr.(*array.List)
	d := list.Data()
	elem, err := convertArray(ctx, list.ListValues(), dst.Elem(), mem)
	if err != nil {
		return nil, err
	}
	defer elem.Release()
	data := array.NewData(dst, d.Len(), d.Buffers(), []arrow.ArrayData{elem.Data()}, d.NullN(), d.Offset())
	defer data.Release()
	return array.MakeFromData(data), nil
}

func convertStruct(ctx context.Context, arr *array.Struct, dst *arrow.StructType, mem memory.Allocator) (arrow.Array, error) {
	children := make([]arrow.ArrayData, arr.NumField())
	for i := range arr.NumField() {
		c, err := convertArray(ctx, arr.Field(i), dst.Field(i).Type, mem)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", dst.Field(i).Name, err)
		}
		defer c.Release()
		children[i] = c.Data()
	}
	d := arr.Data()
	data := array.NewData(dst, d.Len(), d.Buffers()[:1], children, d.NullN(), d.Offset())
	defer data.Release()
	return array.MakeFromData(data), nil
}

// textArray renders each value as text: decimals exactly, UUIDs in their
// canonical form, intervals and durations as Arrow prints them, lists,
// maps and structs as JSON.
func textArray(arr arrow.Array, mem memory.Allocator) (arrow.Array, error) {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(arr.Len())
	structured := isStructured(arr.DataType())
	for i := range arr.Len() {
		if arr.IsNull(i) {
			b.AppendNull()
			continue
		}
		if !structured {
			b.Append(arr.ValueStr(i))
			continue
		}
		j, err := json.Marshal(arr.GetOneForMarshal(i))
		if err != nil {
			return nil, fmt.Errorf("render %s as JSON: %w", arr.DataType(), err)
		}
		b.BinaryBuilder.Append(j)
	}
	return b.NewArray(), nil
}

func isStructured(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.MAP, arrow.STRUCT, arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW:
		return true
	}
	return false
}
