package runner

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes/stream"
)

// TestFlattener_Infer: columns are inferred in a stable order (known ones
// first, new ones by name), types widen within a batch and stay fixed
// after it, and a value that no longer fits is reported.
func TestFlattener_Infer(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	f := newFlattener(nil)
	batches := []struct {
		events     []string
		wantSchema string
		wantErrs   []string
	}{
		{[]string{`{"b":1,"a":"x","n":null}`, `{"b":2.5,"c":true,"o":{"k":[1]}}`, `oops`},
			"a:utf8 b:float64 c:bool o:utf8 _weir_raw:utf8 _weir_error:utf8 _weir_seq:int64",
			[]string{"", "", "not a JSON object: invalid character 'o' looking for beginning of value"}},
		{[]string{`{"n":3,"c":"yes","a":"y"}`},
			"a:utf8 b:float64 c:bool o:utf8 n:int64 _weir_raw:utf8 _weir_error:utf8 _weir_seq:int64",
			[]string{"type(c): yes does not fit bool (inferred from earlier events; give the task a contract to fix the schema)"}},
	}
	for i, b := range batches {
		var evs []stream.Event
		for _, e := range b.events {
			evs = append(evs, stream.Parse([]byte(e)))
		}
		rec := f.record(mem, evs, nil)
		var got string
		for j, fld := range rec.Schema().Fields() {
			if j > 0 {
				got += " "
			}
			got += fld.Name + ":" + fld.Type.String()
		}
		if got != b.wantSchema {
			t.Errorf("batch %d: schema %s, want %s", i, got, b.wantSchema)
		}
		errs := rec.Column(int(rec.NumCols()) - 2)
		for j, want := range b.wantErrs {
			if have := errs.ValueStr(j); (want == "" && !errs.IsNull(j)) || (want != "" && have != want) {
				t.Errorf("batch %d event %d: error %q, want %q", i, j, have, want)
			}
		}
		rec.Release()
	}
}

// TestFlattener_MergeKeyMissing: an event without its merge key is marked.
func TestFlattener_MergeKeyMissing(t *testing.T) {
	f := newFlattener([]string{"id", "v"})
	rec := f.record(memory.DefaultAllocator, []stream.Event{stream.Parse([]byte(`{"v":1}`))}, []string{"id"})
	defer rec.Release()
	if got := rec.Column(3).ValueStr(0); got != "required(id): the merge key is missing" {
		t.Errorf("error %q", got)
	}
	if got := rec.Column(1).ValueStr(0); got != "1" {
		t.Errorf("contract columns are text: v = %q, want 1", got)
	}
}
