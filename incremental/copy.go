package incremental

import (
	"context"
	"fmt"

	"github.com/weirhq/weir/routes"
)

// OpenPair opens src as a Source and dst as a Destination (URLs); the
// errors say which end failed.
func OpenPair(ctx context.Context, src, dst string) (routes.Source, routes.Destination, error) {
	s, err := routes.OpenSource(ctx, src)
	if err != nil {
		return nil, nil, fmt.Errorf("source: %w", err)
	}
	d, err := routes.OpenDestination(ctx, dst)
	if err != nil {
		s.Close()
		return nil, nil, fmt.Errorf("destination: %w", err)
	}
	return s, d, nil
}

// Copy copies one table the way every transfer does (weir.Transfer, a
// dagfile transfer task, the route tests): routes.Copy, with append and
// merge reading past the watermark the destination saved (Watermark on
// cursor; "" is the table's single-column primary key). A spec that
// brings its own Window keeps it. It returns the window that bound the run
// (decided under the lock; the zero Window for replace).
func Copy(ctx context.Context, src routes.Source, dst routes.Destination, spec routes.CopySpec, cursor string) (routes.CopyResult, routes.Window, error) {
	if spec.Window == nil && (spec.Mode == routes.ModeAppend || spec.Mode == routes.ModeMerge) {
		spec.Window = Watermark(src, dst, cursor)
	}
	var win routes.Window
	if wf := spec.Window; wf != nil {
		spec.Window = func(ctx context.Context, info *routes.TableInfo, dest routes.TableRef) (routes.Window, error) {
			w, err := wf(ctx, info, dest)
			win = w
			return w, err
		}
	}
	res, err := routes.Copy(ctx, src, dst, spec)
	return res, win, err
}

// CopyURLs opens the pair, copies one table (Copy) and closes both ends.
func CopyURLs(ctx context.Context, src, dst string, spec routes.CopySpec, cursor string) (routes.CopyResult, error) {
	s, d, err := OpenPair(ctx, src, dst)
	if err != nil {
		return routes.CopyResult{}, err
	}
	defer s.Close()
	defer d.Close()
	res, _, err := Copy(ctx, s, d, spec, cursor)
	return res, err
}
