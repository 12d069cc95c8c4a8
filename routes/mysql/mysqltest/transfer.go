package mysqltest

import (
	"context"

	"github.com/weirhq/weir/routes"
)

// Transfer is a routestest.TransferFunc that runs one table the way the
// incremental driver will: replace records the source's highest primary
// key as the watermark (when the source is a routes.CursorSource); append
// and merge read past the watermark the destination saved. It stands in
// for package incremental in the route tests.
func Transfer(ctx context.Context, srcURL, dstURL string, spec routes.CopySpec) error {
	src, err := routes.OpenSource(ctx, srcURL)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := routes.OpenDestination(ctx, dstURL)
	if err != nil {
		return err
	}
	defer dst.Close()
	spec.Window = window(src, dst, spec.Mode)
	_, err = routes.Copy(ctx, src, dst, spec)
	return err
}

func window(src routes.Source, dst routes.Destination, mode routes.Mode) routes.WindowFunc {
	cs, ok := routes.As[routes.CursorSource](src)
	sr, ok2 := routes.As[routes.StateReader](dst)
	if !ok || !ok2 {
		return nil
	}
	return func(ctx context.Context, info *routes.TableInfo, dest routes.TableRef) (routes.Window, error) {
		if len(info.PrimaryKey) != 1 {
			return routes.Window{}, nil
		}
		w := routes.Window{Cursor: info.PrimaryKey[0]}
		max, ok, err := cs.MaxCursor(ctx, info, w.Cursor)
		if err != nil || !ok {
			return routes.Window{Empty: !ok && mode != routes.ModeReplace}, err
		}
		w.Until = max
		if mode == routes.ModeReplace {
			return w, nil
		}
		st, found, err := sr.LoadState(ctx, dest, info.SourceID)
		if err != nil {
			return w, err
		}
		if found && st.Cursor == w.Cursor {
			w.After = st.Watermark
		}
		w.Empty = w.After == w.Until
		return w, nil
	}
}
