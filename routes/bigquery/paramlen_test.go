package bigquery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	bq "cloud.google.com/go/bigquery"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/bigquery/bigquerytest"
)

// TestEmulator_ParameterizedTooLong: an append into a user's table with a
// STRING(L) column, from a source column of no such bound,
// checks the staged values' lengths before the commit's INSERT and
// refuses a longer one, bad input naming the column, its type, the
// value's length (never the value) and the SET DATA TYPE to run; the
// table keeps its rows. BigQuery refuses such a value itself at the
// INSERT (exit 1); the emulator stored it whole, exit 0.
func TestEmulator_ParameterizedTooLong(t *testing.T) {
	f := bigquerytest.New(t)
	e := openEndpoint(t, f, "format=json")
	ctx := t.Context()
	ref := routes.TableRef{Schema: f.Dataset, Name: "p"}
	err := e.table(ref).Create(ctx, &bq.TableMetadata{Schema: bq.Schema{{Name: "id", Type: bq.IntegerFieldType},
		{Name: "s", Type: bq.StringFieldType, MaxLength: 3}, {Name: "b", Type: bq.BytesFieldType, MaxLength: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	info := &routes.TableInfo{SourceID: "test#p", Ref: routes.TableRef{Name: "p"}, Columns: []routes.Column{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true}}}
	cases := []struct {
		name, row string // the row as Arrow JSON
		got       string // "": it lands; else the length the refusal names
	}{
		{"fits", `{"id": 1, "s": "abc"}`, ""},
		{"multibyte fits", `{"id": 2, "s": "ééé"}`, ""},
		{"one character too long", `{"id": 3, "s": "abcd"}`, "4 characters"},
		{"a trailing space too long", `{"id": 4, "s": "abc "}`, "4 characters"},
		// BYTES(L) is not checked (BigQuery's error, exit 1): the
		// emulator keeps a loaded BYTES value as its base64 text.
		{"bytes are left to BigQuery", `{"id": 5, "b": "YWJjZA=="}`, ""},
	}
	landed := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := appendRows(t, e, info, "p", "["+c.row+"]")
			n := len(f.Query(t, ctx, "SELECT id FROM "+f.Ident("p")))
			if c.got == "" {
				if err != nil {
					t.Fatal(err)
				}
				landed++
				if n != landed {
					t.Fatalf("%d rows, want %d", n, landed)
				}
				return
			}
			col, typ := "s", "STRING(3)"
			if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), ref.String()+"."+col) || !strings.Contains(err.Error(), typ) ||
				!strings.Contains(err.Error(), c.got) || !strings.Contains(err.Error(), "SET DATA TYPE") || strings.Contains(err.Error(), "abc") {
				t.Fatalf("err = %v, want bad input naming %s.%s, %s, %s and the SET DATA TYPE, not the value", err, ref, col, typ, c.got)
			}
			t.Log(err)
			if n != landed {
				t.Fatalf("the refused append changed the table: %d rows, want %d", n, landed)
			}
		})
	}
}

// appendRows appends one pipe of Arrow JSON rows to table.
func appendRows(t *testing.T, e *Endpoint, info *routes.TableInfo, table, rows string) error {
	t.Helper()
	ctx := t.Context()
	run := routes.NewRunID()
	st, err := e.Prepare(ctx, info, routes.WriteOptions{Table: routes.TableRef{Name: table}, Mode: routes.ModeAppend, RunID: run})
	if err != nil {
		return err
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, info.Schema(), strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	rr, _ := array.NewRecordReader(info.Schema(), []arrow.RecordBatch{rec})
	rec.Release()
	if _, err := st.Write(ctx, rr); err != nil {
		return errors.Join(err, st.Abort(context.WithoutCancel(ctx)))
	}
	if err := st.Commit(ctx, routes.State{SourceID: info.SourceID, RunID: run, Cursor: "id", Watermark: fmt.Sprint(len(rows))}); err != nil {
		return errors.Join(err, st.Abort(context.WithoutCancel(ctx)))
	}
	return nil
}
