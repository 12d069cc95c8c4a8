package cdc

import (
	"context"

	"github.com/weirhq/weir/routes"
)

// Applier is the destination capability a replica needs: apply folded
// changes and save each destination table's state (the new position) in
// ONE transaction. A run opens that transaction with BeginApply and hands
// it its window in chunks (Tx.Flush, every FlushChanges changes; see Open);
// each chunk is applied set-based in this order: fill Unchanged columns
// from the destination's current rows (by Upsert.Origin; the rows earlier
// chunks wrote count, the transaction sees them), TRUNCATE (which clears
// what earlier chunks wrote too), deletes, upserts. Tx.Commit saves the
// states and commits; nothing of the window is visible before, so a crash
// anywhere leaves the destination and its position as they were. Applying
// the chunks of a window in order gives the table applying the whole folded
// window would: each chunk states the end result per key of a stretch of
// changes that follows the stretch before it. Applying the same window
// twice gives the same table. A destination table that does not exist yet
// is created from Table.Info before the transaction begins.
//
// Values reach the destination as the source's change values: strings
// (each type's text, as PostgreSQL's pgoutput sends it) or the typed Go
// values of Change.
type Applier interface {
	// BeginApply creates the missing destination and state tables of
	// tables and opens the run's transaction on a connection of its own.
	BeginApply(ctx context.Context, tables []*Table) (Tx, error)
	// ApplyWindow applies one small window and saves states in one
	// transaction: a bootstrap's TRUNCATE of an empty table, a reset's
	// cleared positions. It creates the state tables of states and the
	// tables of w only.
	ApplyWindow(ctx context.Context, w *Window, states map[routes.TableRef]routes.State) error
}

// Tx is one run's open destination transaction, a replica's (BeginApply)
// or a changelog's (BeginLog).
type Tx interface {
	// Flush hands over what w holds now: a folded chunk is applied (see
	// Applier), a changelog's ops are appended (see LogAppender). The
	// window forgets it afterwards.
	Flush(ctx context.Context, w *Window) error
	// Commit saves the states and commits.
	Commit(ctx context.Context, states map[routes.TableRef]routes.State) error
	// Rollback abandons the transaction; after Commit it only releases
	// the connection.
	Rollback()
}

// FlushChanges and FlushBytes are the apply's one chunk policy, for every
// capture and destination: the window hands what it holds to the open
// transaction and forgets it once it holds FlushChanges changes (a
// changelog: ops) or once the rows it holds reach FlushBytes, estimated
// (rowBytes: each value's interface, header and bytes, and a row's
// slice, Upsert and map entry), whichever comes first. FlushBytes is set
// just above what FlushChanges rows of five narrow columns hold (bench/
// cdc.sh's 5-column row: about 340 B estimated, 6.7 MB a chunk; 7 MiB), so that
// narrow tables keep FlushChanges-change chunks and a wider table's chunks
// hold about as many bytes, not 3× them at 15 columns, nor 1.5 GB at
// 20 000 rows of large text (docs/cdc.md, chunks). Tests lower both to
// make chunk boundaries fall everywhere.
var (
	FlushChanges = 20000
	FlushBytes   = 7 << 20
)

// Open begins one incremental run into dst: the destination transaction
// (a changelog's when changelog is set, else a replica's) and a window
// that streams into it every FlushChanges changes, so a run's memory is
// flat in its window's size. Finish flushes the rest and commits; Rollback
// the Tx on any error (and after Finish: it releases the connection).
func Open(ctx context.Context, dst routes.Destination, url string, tables []*Table, changelog bool) (*Window, Tx, error) {
	var tx Tx
	w := NewWindow()
	if changelog {
		la, err := AsLogAppender(dst, url)
		if err != nil {
			return nil, nil, err
		}
		w = NewLogWindow()
		if tx, err = la.BeginLog(ctx, tables); err != nil {
			return nil, nil, err
		}
	} else {
		a, err := AsApplier(dst, url)
		if err != nil {
			return nil, nil, err
		}
		if tx, err = a.BeginApply(ctx, tables); err != nil {
			return nil, nil, err
		}
	}
	w.flush = func() error { return tx.Flush(ctx, w) }
	return w, tx, nil
}

// Finish flushes the rest of an opened window into tx and commits it with
// the states.
func Finish(ctx context.Context, tx Tx, w *Window, states map[routes.TableRef]routes.State) error {
	if err := tx.Flush(ctx, w); err != nil {
		return err
	}
	return tx.Commit(ctx, states)
}
