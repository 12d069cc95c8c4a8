package dagfile

import (
	"slices"
	"strings"

	"github.com/weirhq/weir/routes/scheme"
)

// Backfill is a task's backfill: the fan-out the generated code runs
// (docs/workers.md): `weir backfill` plans Shards buckets once, Workers
// parallel `weir worker --wait` processes claim them from the claim store
// Claims (a connection of the dagfile), and a last worker checks the task
// is caught up.
type Backfill struct {
	Shards  int    // buckets weir backfill cuts the backlog into
	Workers int    // parallel weir worker steps (default Shards; at most Shards)
	Claims  string // the claim store's connection: scheme.ClaimStores
}

var backfillKeys = []string{"shards", "workers", "claims"}

// backfill decodes a task's backfill: mapping and refuses a task that
// weir backfill cannot cut: only a transfer of one table, mode append or
// merge (a merge only on its cursor), into PostgreSQL.
func (p *parser) backfill(t *Task, k field) {
	fs := p.sub(t, k, backfillKeys)
	b := &Backfill{}
	if p.require(fs, k, "shards", "the number of buckets weir backfill cuts the backlog into") {
		b.Shards = p.d.integer(fs["shards"], 1)
	}
	b.Workers = b.Shards
	if g, ok := fs["workers"]; ok {
		b.Workers = p.d.integer(g, 1)
		if b.Shards > 0 && b.Workers > b.Shards {
			p.d.fail(g.val, g.path, "%d workers for %d shards: a worker takes a whole bucket, so at most %d would work; set workers: to at most shards:", b.Workers, b.Shards, b.Shards)
		}
	}
	if p.require(fs, k, "claims", "the connection of the claim store, "+scheme.ClaimStoresHint) {
		b.Claims = p.conn(fs["claims"])
		if c := p.f.Connections[b.Claims]; c != nil && c.Scheme() != "" && !slices.Contains(scheme.ClaimStores, c.Scheme()) {
			g := fs["claims"]
			p.d.fail(g.val, g.path, "connection %q is %s://: a claim store is %s; name such a connection", b.Claims, c.Scheme(), scheme.ClaimStoresHint)
		}
	}
	if p.cuttable(t, k) {
		t.Backfill = b
	}
}

// cuttable refuses, at the backfill: key, a task whose backlog weir
// backfill cannot cut into buckets, saying what to do.
func (p *parser) cuttable(t *Task, k field) bool {
	refuse := func(format string, args ...any) bool {
		p.d.fail(k.key, k.path, "task %s cannot be split into buckets: "+format+"; remove backfill: (docs/workers.md)", append([]any{t.Name}, args...)...)
		return false
	}
	x := t.Transfer
	switch {
	case t.Kind == "":
		return false // reported already
	case x == nil:
		return refuse("a %s task has no buckets yet (only a transfer task of one table is cut)", t.Kind)
	case len(x.Tables) > 0:
		return refuse("it copies %d tables (tables:), a backfill cuts one; give each table its own task with table:", len(x.Tables))
	case x.Mode != "append" && x.Mode != "merge":
		return refuse("mode %s has no cursor to cut by; use mode: append or merge with an integer cursor:", x.Mode)
	case x.Mode == "merge" && x.Cursor != "" && len(x.PrimaryKey) > 0 && !slices.Equal(x.PrimaryKey, []string{x.Cursor}):
		return refuse("a merge on primary_key %s by cursor %s (buckets of another cursor would upsert the versions of one key in no defined order); merge on the cursor, or use mode: append", strings.Join(x.PrimaryKey, ","), x.Cursor)
	}
	if c := p.f.Connections[x.To]; c != nil && c.Scheme() != "" && c.Scheme() != "postgres" && c.Scheme() != "postgresql" && c.Scheme() != "iceberg" {
		return refuse("its destination %s is %s://, and only PostgreSQL and Iceberg (a SQL catalog) fence the workers' shared commits; write to a postgres:// or iceberg:// connection", x.To, c.Scheme())
	}
	return true
}
