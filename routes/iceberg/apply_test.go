package iceberg_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/iceberg/icebergtest"
)

// cdcTable is a captured table (id int key, name, big) into f's dest.
func cdcTable(f *icebergtest.Fixture, name string) *cdc.Table {
	info := &routes.TableInfo{Scheme: "postgres", SourceID: "test#" + name, Ref: routes.TableRef{Schema: "src", Name: name},
		Columns: []routes.Column{
			{Name: "id", Type: arrow.PrimitiveTypes.Int32},
			{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "big", Type: arrow.BinaryTypes.String, Nullable: true},
		}, PrimaryKey: []string{"id"}}
	return &cdc.Table{Source: info.Ref, Dest: f.TableRef(name), Columns: []string{"id", "name", "big"}, Key: []int{0}, Info: info}
}

// applyRun opens a replica run into f, adds the changes (flushed every
// cdc.FlushChanges) and commits position pos.
func applyRun(ctx context.Context, f *icebergtest.Fixture, t *cdc.Table, pos string, changes ...cdc.Change) error {
	w, tx, err := cdc.Open(ctx, f.Endpoint(), f.URL(), []*cdc.Table{t}, false)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, c := range changes {
		c.Position = pos
		if err := w.Add(t, c); err != nil {
			return err
		}
	}
	return cdc.Finish(ctx, tx, w, map[routes.TableRef]routes.State{t.Dest: {SourceID: t.Info.SourceID, Position: pos, RunID: "r"}})
}

func ins(id int, name, big string) cdc.Change {
	return cdc.Change{Op: cdc.OpInsert, After: []any{fmt.Sprint(id), name, big}}
}

func upd(old, id int, name string, big any) cdc.Change {
	return cdc.Change{Op: cdc.OpUpdate, Key: []any{fmt.Sprint(old)}, After: []any{fmt.Sprint(id), name, big}}
}

func del(id int) cdc.Change { return cdc.Change{Op: cdc.OpDelete, Key: []any{fmt.Sprint(id)}} }

// tableRows scans the table's current snapshot as "id|name|big" rows,
// sorted (NULL as \N).
func tableRows(t *testing.T, ctx context.Context, f *icebergtest.Fixture, name string) []string {
	t.Helper()
	tbl, err := f.Endpoint().LoadTable(ctx, f.TableRef(name))
	if err != nil {
		t.Fatal(err)
	}
	_, batches, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rec, err := range batches {
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			var cells []string
			for c := 0; c < int(rec.NumCols()); c++ {
				if rec.Column(c).IsNull(i) {
					cells = append(cells, `\N`)
				} else {
					cells = append(cells, rec.Column(c).ValueStr(i))
				}
			}
			out = append(out, strings.Join(cells, "|"))
		}
		rec.Release()
	}
	sort.Strings(out)
	return out
}

func setFlush(t *testing.T, n int) {
	old := cdc.FlushChanges
	cdc.FlushChanges = n
	t.Cleanup(func() { cdc.FlushChanges = old })
}

// TestApply_CrossChunk: with chunks of one change, a key inserted in one
// chunk and updated, moved and deleted in later ones, an unchanged value
// filled from an earlier chunk's row, and a TRUNCATE of rows earlier
// chunks wrote, all in one run: the chunks are successive snapshots of one
// commit, so equality deletes retire exactly the earlier chunks' rows.
func TestApply_CrossChunk(t *testing.T) {
	setFlush(t, 1)
	forEachCatalog(t, crossChunk)
}

func crossChunk(t *testing.T, f *icebergtest.Fixture) {
	ctx := testContext(t)
	tb := cdcTable(f, "items")
	err := applyRun(ctx, f, tb, "1",
		ins(1, "a", "BIG1"), ins(2, "b", "BIG2"), ins(3, "c", "BIG3"),
		upd(1, 1, "a2", cdc.Unchanged), // filled from chunk 1's row
		upd(2, 20, "moved", cdc.Unchanged),
		upd(20, 20, "moved again", cdc.Unchanged),
		del(3), ins(3, "c again", ""),
		upd(3, 3, "c3", nil), del(3),
	)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1|a2|BIG1", "20|moved again|BIG2"}
	if got := tableRows(t, ctx, f, "items"); !slices.Equal(got, want) {
		t.Fatalf("after run 1: %v, want %v", got, want)
	}
	tbl, _ := f.Endpoint().LoadTable(ctx, f.TableRef("items"))
	if ids := tbl.Schema().IdentifierFieldIDs; len(ids) != 1 || ids[0] != 1 {
		t.Errorf("identifier fields = %v, want [1] (id)", ids)
	}
	if n := len(tbl.Metadata().Snapshots()); n < 5 {
		t.Errorf("run 1 made %d snapshots, want one per chunk", n)
	}
	err = applyRun(ctx, f, tb, "2",
		ins(5, "e", "x"), upd(20, 21, "m", cdc.Unchanged),
		cdc.Change{Op: cdc.OpTruncate},
		ins(6, "f", "y"), upd(6, 6, "f2", cdc.Unchanged), ins(7, "g", "z"), del(7))
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"6|f2|y"}
	if got := tableRows(t, ctx, f, "items"); !slices.Equal(got, want) {
		t.Fatalf("after the truncate: %v, want %v", got, want)
	}
}

// TestApply_FailureLeavesTable: a failure at each stage inside the apply
// leaves the current snapshot and the state as they were; the re-run
// converges.
func TestApply_FailureLeavesTable(t *testing.T) {
	setFlush(t, 2)
	forEachCatalog(t, failureLeavesTable, "sqlite-file", "postgres-s3", "rest-file")
}

func failureLeavesTable(t *testing.T, f *icebergtest.Fixture) {
	ctx := testContext(t)
	tb := cdcTable(f, "items")
	if err := applyRun(ctx, f, tb, "1", ins(1, "a", "A"), ins(2, "b", "B")); err != nil {
		t.Fatal(err)
	}
	changes := []cdc.Change{upd(1, 10, "a", cdc.Unchanged), del(2), cdc.Change{Op: cdc.OpTruncate}, ins(3, "c", "C"), upd(3, 3, "c2", cdc.Unchanged)}
	for _, stage := range []string{"after-truncate", "before-state", "before-commit"} {
		before := snapshotAndState(t, ctx, f, tb)
		routes.SetCheckpointHook(func(s string) error {
			if s == "apply-"+stage {
				return errors.New("injected failure")
			}
			return nil
		})
		err := applyRun(ctx, f, tb, "2", changes...)
		routes.SetCheckpointHook(nil)
		if err == nil || !strings.Contains(err.Error(), "injected") {
			t.Fatalf("%s: run = %v, want the injected failure", stage, err)
		}
		if got := snapshotAndState(t, ctx, f, tb); got != before {
			t.Fatalf("%s: failed apply moved the table: %s, was %s", stage, got, before)
		}
		if left := f.Staging(t, ctx, "items"); len(left) > 0 {
			t.Fatalf("%s: the failed run left %v", stage, left)
		}
	}
	if err := applyRun(ctx, f, tb, "2", changes...); err != nil {
		t.Fatal(err)
	}
	if got, want := tableRows(t, ctx, f, "items"), []string{"3|c2|C"}; !slices.Equal(got, want) {
		t.Fatalf("after the re-run: %v, want %v", got, want)
	}
}

func snapshotAndState(t *testing.T, ctx context.Context, f *icebergtest.Fixture, tb *cdc.Table) string {
	tbl, err := f.Endpoint().LoadTable(ctx, tb.Dest)
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := f.Endpoint().LoadState(ctx, tb.Dest, tb.Info.SourceID)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("snapshot %d position %q", tbl.CurrentSnapshot().SnapshotID, s.Position)
}

// logRun opens a changelog run into f and adds each change at its
// position (several changes at one position are one transaction).
func logRun(ctx context.Context, f *icebergtest.Fixture, t *cdc.Table, pos string, changes ...posChange) error {
	w, tx, err := cdc.Open(ctx, f.Endpoint(), f.URL(), []*cdc.Table{t}, true)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, c := range changes {
		c.c.Position = c.pos
		if err := w.Add(t, c.c); err != nil {
			return err
		}
	}
	return cdc.Finish(ctx, tx, w, map[routes.TableRef]routes.State{t.Dest: {SourceID: t.Info.SourceID, Position: pos, RunID: "r"}})
}

type posChange struct {
	pos string
	c   cdc.Change
}

// TestLog_SkipsCommittedOps: a changelog handed ops it committed already
// (a capture restarting from another table's lower position) appends only
// the new ones; an unchanged value is filled from the log's latest
// version of the key.
func TestLog_SkipsCommittedOps(t *testing.T) {
	setFlush(t, 1)
	forEachCatalog(t, skipsCommittedOps, "sqlite-file", "postgres-s3", "rest-file")
}

func skipsCommittedOps(t *testing.T, f *icebergtest.Fixture) {
	ctx := testContext(t)
	tb := cdcTable(f, "log")
	first := []posChange{{"p1", ins(1, "a", "BIG")}, {"p1", ins(2, "b", "x")}, {"p2", upd(1, 1, "a2", cdc.Unchanged)}}
	if err := logRun(ctx, f, tb, "p2", first...); err != nil {
		t.Fatal(err)
	}
	again := append(first, posChange{"p3", upd(1, 10, "moved", cdc.Unchanged)}, posChange{"p3", del(2)})
	if err := logRun(ctx, f, tb, "p3", again...); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`1|a|BIG|I|p1|1`, `2|b|x|I|p1|2`, `1|a2|BIG|U|p2|1`,
		`1|\N|\N|D|p3|1`, `10|moved|BIG|U|p3|2`, `2|\N|\N|D|p3|3`,
	}
	var got []string
	for _, r := range tableRows(t, ctx, f, "log") {
		c := strings.Split(r, "|") // id name big op lsn ord ts
		got = append(got, strings.Join(c[:6], "|"))
	}
	sort.Slice(got, func(i, j int) bool {
		a, b := strings.Split(got[i], "|"), strings.Split(got[j], "|")
		return a[4]+a[5] < b[4]+b[5]
	})
	if !slices.Equal(got, want) {
		t.Fatalf("log:\n got %v\nwant %v", got, want)
	}
}
