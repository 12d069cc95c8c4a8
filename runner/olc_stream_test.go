package runner

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestOLC_Stream: an OLC contract on a stream task types the events by
// its fields and quarantines the events breaking its row rules, as weir's
// own format does (one code path).
func TestOLC_Stream(t *testing.T) {
	f := newTruthFeed(t, &truthFeed{n: 12, closeAll: true, bad: map[int]string{3: `{"id":"x","seq":3}`}})
	d := &streamDAG{dir: t.TempDir(), schema: "raw"}
	d.path = filepath.Join(d.dir, "weir.yaml")
	d.sinkURL = ResolveURL("iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake", d.dir)
	writeFile(t, d.path, `version: 1
connections:
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  t:
    stream: {source: "`+f.sseURL()+`", sink: lake:raw.t, batch_interval: 300ms, cursor: seq}
    contract: c.olc.yaml
`)
	writeFile(t, filepath.Join(d.dir, "c.olc.yaml"), olcHead+`model:
  fields:
    - {name: id, type: integer, required: true}
    - {name: seq, type: integer}
quality:
  row_rules:
    - {name: id_not_fifth, sql: "id % 5 <> 0"}
`)
	r, err := Load(d.path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(testContext(t), 40*time.Second)
	defer cancel()
	rep, err := r.Once(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.ids(t, "t"), []string{"1", "2", "4", "6", "7", "8", "9", "11", "12"}; !slices.Equal(got, want) {
		t.Errorf("ids %v, want %v", got, want)
	}
	if want := map[string]int64{"type(id)": 1, "id_not_fifth": 2}; rep.Quarantined != 3 || rep.Contract == nil || !maps.Equal(rep.Contract.Rules, want) {
		t.Errorf("report %+v contract %+v, want 3 quarantined, rules %v", rep, rep.Contract, want)
	}
}
