package incremental

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/big"
	"sync"

	"github.com/weirhq/weir/routes"
)

// Watermark returns the routes.WindowFunc of an append or merge run: rows
// whose cursor is past the saved watermark, up to the cursor's maximum now.
// The cursor defaults to the table's single-column integer primary key.
//
// routes.Copy decides a window twice, a first look and then under the
// lock, with the same probed info: the NULL count of the cursor (a scan or
// a count(*) on the source) runs in the first look only.
func Watermark(src routes.Source, dst routes.Destination, cursor string) routes.WindowFunc {
	var counted sync.Map // *routes.TableInfo whose cursor NULLs were counted
	return func(ctx context.Context, info *routes.TableInfo, dest routes.TableRef) (routes.Window, error) {
		col, err := CursorColumn(info, cursor)
		if err != nil {
			return routes.Window{}, err
		}
		if _, done := counted.LoadOrStore(info, true); !done {
			if err := noNullCursor(ctx, src, info, col); err != nil {
				return routes.Window{}, err
			}
		}
		after, err := savedWatermark(ctx, dst, dest, info.SourceID, col)
		// A backfill under way: the window is decided all the same (weir
		// status shows its lag), then refused (ErrBackfill).
		busy := err
		if errors.Is(err, ErrBackfill) {
			err = nil
		} else {
			busy = nil
		}
		if err == nil && (after != "" || busy != nil) && destDropped(ctx, dst, dest) {
			// the rows the watermark, or a backfill's workers, counted are
			// gone: start over (the plan with them)
			after, busy = "", nil
		}
		if err == nil && after == "" {
			after, err = destWatermark(ctx, dst, dest, col)
		}
		if err != nil {
			return routes.Window{}, err
		}
		until, ok, err := maxCursor(ctx, src, info, col)
		if err != nil || !ok {
			return routes.Window{Cursor: col, After: after, Empty: true}, cmp.Or(err, busy)
		}
		w, err := window(info, col, after, until)
		return w, cmp.Or(err, busy)
	}
}

func window(info *routes.TableInfo, col, after, until string) (routes.Window, error) {
	w := routes.Window{Cursor: col, After: after, Until: until}
	if after == "" {
		return w, nil
	}
	switch c := Compare(until, after); {
	case c == 0:
		w.Empty = true
	case c < 0:
		return w, &routes.ProbeError{Table: info.Ref.String(), Column: col,
			Problem: fmt.Sprintf("cursor went backwards: its maximum is now %s, below the saved watermark %s", until, after),
			Hint:    "the cursor must only grow; use a monotonic column, or run once with --mode replace to start over"}
	}
	return w, nil
}

// cursorColumn picks and checks the cursor column.
func CursorColumn(info *routes.TableInfo, cursor string) (string, error) {
	if cursor == "" {
		if len(info.PrimaryKey) != 1 {
			return "", &routes.ProbeError{Table: info.Ref.String(), Problem: "no cursor for an incremental run: the table has no single-column primary key", Hint: "pass --cursor COLUMN (an increasing integer or timestamp)"}
		}
		cursor = info.PrimaryKey[0]
	}
	if _, ok := info.Column(cursor); !ok {
		return "", &routes.ProbeError{Table: info.Ref.String(), Column: cursor, Problem: "cursor column does not exist", Hint: "name an existing column with --cursor"}
	}
	return cursor, nil
}

// noNullCursor refuses a nullable cursor column that holds NULLs: those
// rows would never be copied (NULL is neither past the watermark nor at
// most the maximum).
func noNullCursor(ctx context.Context, src routes.Source, info *routes.TableInfo, col string) error {
	c, _ := info.Column(col)
	nc, ok := routes.As[routes.CursorSource](src)
	if !c.Nullable || !ok {
		return nil // not a CursorSource: maxCursor refuses the run
	}
	n, err := nc.NullCount(ctx, info, col)
	if err != nil || n == 0 {
		return err
	}
	return &routes.ProbeError{Table: info.Ref.String(), Column: col,
		Problem: fmt.Sprintf("%d rows have a NULL cursor: an incremental run would never copy them", n),
		Hint:    "fill the column (and make it NOT NULL), pick a cursor without NULLs with --cursor, or use --mode replace"}
}

func savedWatermark(ctx context.Context, dst routes.Destination, dest routes.TableRef, sourceID, col string) (string, error) {
	sr, ok := routes.As[routes.StateReader](dst)
	if !ok {
		return "", fmt.Errorf("%w: destination keeps no state, so it cannot run incrementally", routes.ErrUnsupported)
	}
	st, found, err := sr.LoadState(ctx, dest, sourceID)
	if err != nil || !found {
		return "", err
	}
	if err := backfillUnderWay(dest, st); err != nil {
		return st.Watermark, err
	}
	if st.Cursor != "" && st.Cursor != col {
		return "", routes.BadInput("%s: the saved watermark is on column %q, not %q; keep the same --cursor, or run once with --mode replace", dest, st.Cursor, col)
	}
	return st.Watermark, nil
}

// destDropped reports whether the destination table is gone while its
// state row stayed (dropped by hand): resuming from the saved watermark
// would recreate it with only the rows past it.
func destDropped(ctx context.Context, dst routes.Destination, dest routes.TableRef) bool {
	ds, ok := routes.As[routes.Prober](dst)
	if !ok {
		return false
	}
	_, err := ds.Probe(ctx, dest)
	return errors.Is(err, routes.ErrNotFound)
}

// destWatermark bootstraps a watermark from the rows already in the
// destination (loaded by a replace, or by another tool): its cursor's
// maximum (a routes.Prober and CursorSource: the destination is not
// opened as a Source). A destination table that does not exist yet starts
// from zero.
func destWatermark(ctx context.Context, dst routes.Destination, dest routes.TableRef, col string) (string, error) {
	ds, ok := routes.As[routes.Prober](dst)
	if !ok {
		return "", nil
	}
	info, err := ds.Probe(ctx, dest)
	if errors.Is(err, routes.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the watermark from %s: %w", dest, err)
	}
	if _, ok := info.Column(col); !ok {
		return "", routes.BadInput("destination %s has no column %q to resume the cursor from", dest, col)
	}
	max, _, err := maxCursor(ctx, ds, info, col)
	return max, err
}

func maxCursor(ctx context.Context, src any, info *routes.TableInfo, col string) (string, bool, error) {
	cs, ok := routes.As[routes.CursorSource](src)
	if !ok {
		return "", false, fmt.Errorf("%w: %s source cannot read incrementally", routes.ErrUnsupported, info.Scheme)
	}
	return cs.MaxCursor(ctx, info, col)
}

// Compare orders two text-encoded cursor values: as numbers when both are
// integers or decimals, else as text (fixed-width timestamps sort as text).
func Compare(a, b string) int {
	x, okA := new(big.Rat).SetString(a)
	y, okB := new(big.Rat).SetString(b)
	if okA && okB {
		return x.Cmp(y)
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
