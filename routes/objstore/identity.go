package objstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/weirhq/weir/routes"
)

// TableID names a table of a local directory by its real path, so that a
// trailing slash, a symlink or a relative path reach the same table
// (routes.TableIdentifier). Object stores are compared by their URLs.
func (e *Endpoint) TableID(ctx context.Context, ref routes.TableRef) (string, error) {
	st, ok := e.store.(*fileStore)
	if !ok {
		return "", fmt.Errorf("%w: %s names its tables by URL", routes.ErrUnsupported, e.url.Scheme())
	}
	p, err := tablePath(ref)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(st.path(p))
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: %w", e.describe(p), routes.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("identify %s: %w", e.describe(p), err)
	}
	return "file:" + real, nil
}
