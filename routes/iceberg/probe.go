package iceberg

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
)

// SnapshotSep starts the snapshot suffix of a table name: ns.events@123
// reads snapshot 123 of ns.events (time travel).
const SnapshotSep = "@"

// splitSnapshot splits "name@<snapshot-id>"; 0 means no suffix.
func splitSnapshot(t routes.TableRef) (routes.TableRef, int64, error) {
	i := strings.LastIndex(t.Name, SnapshotSep)
	if i < 0 {
		return t, 0, nil
	}
	id, err := strconv.ParseInt(t.Name[i+1:], 10, 64)
	if err != nil {
		return t, 0, routes.BadInput("table %s: %q after %s is not a snapshot id", t, t.Name[i+1:], SnapshotSep)
	}
	t.Name = t.Name[:i]
	return t, id, nil
}

// pinned is the snapshot a read is pinned to: the name's suffix, else the
// URL's snapshot=, else 0 (the current snapshot at plan time).
func (e *Endpoint) pinned(t routes.TableRef) (routes.TableRef, int64, error) {
	base, id, err := splitSnapshot(t)
	if err == nil && id == 0 {
		id = e.cfg.snapshot
	}
	return base, id, err
}

// Probe loads the table (at its pinned snapshot, if any): columns with
// their Iceberg types as NativeType, identifier fields as primary key,
// total-records as the estimate.
func (e *Endpoint) Probe(ctx context.Context, t routes.TableRef) (*routes.TableInfo, error) {
	base, snapID, err := e.pinned(t)
	if err != nil {
		return nil, err
	}
	tbl, err := e.loadTable(ctx, base)
	if errors.Is(err, routes.ErrNotFound) {
		return nil, &routes.ProbeError{Table: t.String(), Problem: "iceberg table does not exist", Err: routes.ErrNotFound}
	}
	if err != nil {
		return nil, err
	}
	snap, err := snapshotAt(tbl, snapID)
	if err != nil {
		return nil, &routes.ProbeError{Table: t.String(), Problem: err.Error(), Hint: "list the table's snapshots and pick one that is not expired"}
	}
	sc := schemaOf(tbl, snap)
	info := &routes.TableInfo{Scheme: Scheme, Ref: routes.TableRef{Schema: ident(base)[0], Name: t.Name}, SourceID: e.sourceID(base)}
	if info.Columns, err = columns(sc); err != nil {
		return nil, &routes.ProbeError{Table: t.String(), Problem: err.Error()}
	}
	info.PrimaryKey = keyNames(sc)
	if snap != nil && snap.Summary != nil {
		info.RowEstimate, _ = strconv.ParseInt(snap.Summary.Properties["total-records"], 10, 64)
	}
	return info, nil
}

// snapshotAt returns the snapshot id (0: the current one, nil when the
// table has none yet).
func snapshotAt(tbl *table.Table, id int64) (*table.Snapshot, error) {
	if id == 0 {
		return tbl.CurrentSnapshot(), nil
	}
	if s := tbl.SnapshotByID(id); s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("snapshot %d does not exist", id)
}

// schemaOf is the schema a snapshot was written with, else the current.
func schemaOf(tbl *table.Table, snap *table.Snapshot) *iceberg.Schema {
	if snap != nil && snap.SchemaID != nil && snap.SnapshotID != currentID(tbl) {
		for _, s := range tbl.Metadata().Schemas() {
			if s.ID == *snap.SchemaID {
				return s
			}
		}
	}
	return tbl.Schema()
}

func currentID(tbl *table.Table) int64 {
	if s := tbl.CurrentSnapshot(); s != nil {
		return s.SnapshotID
	}
	return 0
}

// arrowSchema is the Arrow schema scans of sc produce.
func arrowSchema(sc *iceberg.Schema) (*arrow.Schema, error) {
	return table.SchemaToArrowSchema(sc, nil, false, false)
}

func columns(sc *iceberg.Schema) ([]routes.Column, error) {
	as, err := arrowSchema(sc)
	if err != nil {
		return nil, err
	}
	fields := sc.Fields()
	cols := make([]routes.Column, len(fields))
	for i, f := range fields {
		cols[i] = routes.Column{Name: f.Name, Type: as.Field(i).Type, Nullable: !f.Required, NativeType: f.Type.String()}
	}
	return cols, nil
}

func keyNames(sc *iceberg.Schema) []string {
	var names []string
	for _, id := range sc.IdentifierFieldIDs {
		if f, ok := sc.FindFieldByID(id); ok {
			names = append(names, f.Name)
		}
	}
	return names
}

// ListTables lists the tables of a namespace, sorted as the catalog lists them.
func (e *Endpoint) ListTables(ctx context.Context, namespace string) ([]routes.TableRef, error) {
	var out []routes.TableRef
	for id, err := range e.cat.ListTables(ctx, table.Identifier{namespace}) {
		if err != nil {
			return nil, fmt.Errorf("list tables of %s: %w", namespace, err)
		}
		out = append(out, routes.TableRef{Schema: namespace, Name: id[len(id)-1]})
	}
	return out, nil
}
