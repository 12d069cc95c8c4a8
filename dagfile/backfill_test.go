package dagfile

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// bfHead is a dagfile prefix with a PostgreSQL source and destination, a
// claim store on each backend, and an Iceberg lake.
const bfHead = `version: 1
connections:
  app: ${APP_PG_URL}
  wh: postgres://weir:${WH_PASS}@db:5432/wh
  claims: ${CLAIMS_URL}
  local_claims: sqlite:///var/weir/claims.db
  lake: iceberg://?catalog=sql
  ch: clickhouse://default@ch:9000/default
tasks:
`

func TestParse_Backfill(t *testing.T) {
	head := strings.Replace(bfHead, "  lake:", "  etcd_claims: etcd://etcd:2379\n  lake:", 1)
	f, err := Parse([]byte(head+`  orders:
    transfer: {from: app, table: public.orders, to: wh, mode: append, cursor: id}
    backfill: {shards: 8, workers: 4, claims: claims}
  items:
    transfer: {from: app, table: public.items, to: wh, mode: merge}
    backfill: {shards: 3, claims: local_claims}
  lines:
    transfer: {from: app, table: public.lines, to: wh, mode: append}
    backfill: {shards: 2, claims: etcd_claims}
`), "testdata/weir.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	o := f.Task("orders")
	if o.Backfill == nil || *o.Backfill != (Backfill{Shards: 8, Workers: 4, Claims: "claims"}) {
		t.Errorf("orders backfill = %+v", o.Backfill)
	}
	if b := f.Task("items").Backfill; b == nil || *b != (Backfill{Shards: 3, Workers: 3, Claims: "local_claims"}) {
		t.Errorf("items backfill = %+v, want workers defaulting to shards", b)
	}
	if b := f.Task("lines").Backfill; b == nil || b.Claims != "etcd_claims" {
		t.Errorf("lines backfill = %+v, want its etcd:// claim store", b)
	}
	// The claim store is one of the task's connections: its variables are
	// the task's, given to its pods and workers like the others.
	if got := o.Connections(); !slices.Equal(got, []string{"app", "claims", "wh"}) {
		t.Errorf("connections = %v", got)
	}
	if got := f.Vars(o); !slices.Equal(got, []string{"APP_PG_URL", "CLAIMS_URL", "WH_PASS"}) {
		t.Errorf("vars = %v", got)
	}
}

// TestParse_BackfillRefused: a task weir backfill cannot cut is refused
// where backfill: is written, naming the task and what to do.
func TestParse_BackfillRefused(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"model", "  a:\n    model: {source: app:public.x, sink: lake:s.a, sql: SELECT 1}\n    backfill: {shards: 4, claims: claims}\n",
			"testdata/weir.yaml:12:5: tasks.a.backfill: task a cannot be split into buckets: a model task has no buckets yet (only a transfer task of one table is cut); remove backfill: (docs/workers.md)"},
		{"stream", "  a:\n    stream: {source: kafka://k:9092/t, sink: lake:s.a}\n    backfill: {shards: 4, claims: claims}\n",
			"testdata/weir.yaml:12:5: tasks.a.backfill: task a cannot be split into buckets: a stream task has no buckets yet (only a transfer task of one table is cut); remove backfill: (docs/workers.md)"},
		{"replace", "  a:\n    transfer: {from: app, table: public.x, to: wh}\n    backfill: {shards: 4, claims: claims}\n",
			"testdata/weir.yaml:12:5: tasks.a.backfill: task a cannot be split into buckets: mode replace has no cursor to cut by; use mode: append or merge with an integer cursor:; remove backfill: (docs/workers.md)"},
		{"several tables", "  a:\n    transfer: {from: app, tables: [public.x, public.y], to: wh, mode: append}\n    backfill: {shards: 4, claims: claims}\n",
			"testdata/weir.yaml:12:5: tasks.a.backfill: task a cannot be split into buckets: it copies 2 tables (tables:), a backfill cuts one; give each table its own task with table:; remove backfill: (docs/workers.md)"},
		{"merge on another key", "  a:\n    transfer: {from: app, table: public.x, to: wh, mode: merge, cursor: seq, primary_key: [id]}\n    backfill: {shards: 4, claims: claims}\n",
			"testdata/weir.yaml:12:5: tasks.a.backfill: task a cannot be split into buckets: a merge on primary_key id by cursor seq (buckets of another cursor would upsert the versions of one key in no defined order); merge on the cursor, or use mode: append; remove backfill: (docs/workers.md)"},
		{"clickhouse destination", "  a:\n    transfer: {from: app, table: public.x, to: ch, mode: append}\n    backfill: {shards: 4, claims: claims}\n",
			"testdata/weir.yaml:12:5: tasks.a.backfill: task a cannot be split into buckets: its destination ch is clickhouse://, and only PostgreSQL and Iceberg (a SQL catalog) fence the workers' shared commits; write to a postgres:// or iceberg:// connection; remove backfill: (docs/workers.md)"},
		{"no shards", "  a:\n    transfer: {from: app, table: public.x, to: wh, mode: append}\n    backfill: {claims: claims}\n",
			"testdata/weir.yaml:12:5: tasks.a.backfill: backfill needs shards: (the number of buckets weir backfill cuts the backlog into)"},
		{"zero shards", "  a:\n    transfer: {from: app, table: public.x, to: wh, mode: append}\n    backfill: {shards: 0, claims: claims}\n",
			"testdata/weir.yaml:12:24: tasks.a.backfill.shards: expected an integer ≥ 1, got \"0\""},
		{"more workers than shards", "  a:\n    transfer: {from: app, table: public.x, to: wh, mode: append}\n    backfill: {shards: 2, workers: 3, claims: claims}\n",
			"testdata/weir.yaml:12:36: tasks.a.backfill.workers: 3 workers for 2 shards: a worker takes a whole bucket, so at most 2 would work; set workers: to at most shards:"},
		{"no claims", "  a:\n    transfer: {from: app, table: public.x, to: wh, mode: append}\n    backfill: {shards: 2}\n",
			"testdata/weir.yaml:12:5: tasks.a.backfill: backfill needs claims: (the connection of the claim store, postgres://…, etcd[+https]://host:port[,host:port…] or sqlite:///path)"},
		{"claims not a store", "  a:\n    transfer: {from: app, table: public.x, to: wh, mode: append}\n    backfill: {shards: 2, claims: lake}\n",
			"testdata/weir.yaml:12:35: tasks.a.backfill.claims: connection \"lake\" is iceberg://: a claim store is postgres://…, etcd[+https]://host:port[,host:port…] or sqlite:///path; name such a connection"},
		{"claims unknown", "  a:\n    transfer: {from: app, table: public.x, to: wh, mode: append}\n    backfill: {shards: 2, claims: claim}\n",
			"testdata/weir.yaml:12:35: tasks.a.backfill.claims: unknown connection \"claim\" (did you mean \"claims\"?); defined: app, ch, claims, lake, local_claims, wh"},
		{"unknown key", "  a:\n    transfer: {from: app, table: public.x, to: wh, mode: append}\n    backfill: {shards: 2, claims: claims, worker: 2}\n",
			"testdata/weir.yaml:12:43: tasks.a.backfill.worker: unknown key \"worker\" (did you mean \"workers\"?); allowed: shards, workers, claims"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(bfHead+c.yaml), "testdata/weir.yaml", nil)
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("error = %v, want an ErrorList", err)
			}
			var got []string
			for _, e := range list {
				got = append(got, e.Error())
			}
			if !slices.Contains(got, c.want) {
				t.Errorf("errors:\n%s\nwant among them:\n%s", strings.Join(got, "\n"), c.want)
			}
		})
	}
}
