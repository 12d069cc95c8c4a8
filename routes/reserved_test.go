package routes

import (
	"context"
	"errors"
	"testing"
)

type probeOnly struct{ Source }

func (probeOnly) Probe(_ context.Context, t TableRef) (*TableInfo, error) {
	return &TableInfo{Ref: t}, nil
}

type noPrepare struct {
	Destination
	t *testing.T
}

func (d noPrepare) Prepare(context.Context, *TableInfo, WriteOptions) (Stage, error) {
	d.t.Fatal("Prepare called for a destination named like weir's state table")
	return nil, nil
}

// A destination table named _weir_state, by its source's name or by
// --dest-table / --dest-schema, is refused before anything is locked or
// written, in every mode.
func TestCopy_RefusesStateTableName(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec CopySpec
	}{
		{"source name", CopySpec{Table: TableRef{Schema: "s", Name: "_weir_state"}}},
		{"dest-table", CopySpec{Table: TableRef{Schema: "s", Name: "t"}, DestTable: TableRef{Schema: "d", Name: "_weir_state"}}},
		{"dest-schema", CopySpec{Table: TableRef{Schema: "s", Name: "_weir_state"}, DestSchema: "d"}},
		{"append", CopySpec{Table: TableRef{Schema: "s", Name: "_weir_state"}, Mode: ModeAppend}},
		{"merge", CopySpec{Table: TableRef{Schema: "s", Name: "_weir_state"}, Mode: ModeMerge}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Copy(context.Background(), probeOnly{}, noPrepare{t: t}, tc.spec)
			if !errors.Is(err, ErrBadInput) {
				t.Fatalf("got %v, want bad input naming weir's state table", err)
			}
		})
	}
	// Names that only look like weir's are the user's and go on to Prepare.
	for _, name := range []string{"_weir_state_x", "weir_state", "_WEIR_STATE", "_weir_stage_x"} {
		err := CheckDestTable(TableRef{Schema: "s", Name: name}, Unlimited)
		if err != nil {
			t.Fatalf("%s: refused: %v", name, err)
		}
	}
}
