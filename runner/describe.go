package runner

import (
	"context"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/routes"
)

// Describe probes a table of the dagfile (its connection opened as a
// source) for its columns, e.g. for lineage after a run.
func (r *Runner) Describe(ctx context.Context, a dagfile.TableAddr) ([]routes.Column, error) {
	src, err := r.source(ctx, a.Conn)
	if err != nil {
		return nil, err
	}
	info, err := src.Probe(ctx, tableRef(a))
	if err != nil {
		return nil, err
	}
	return info.Columns, nil
}
