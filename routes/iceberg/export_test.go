package iceberg

import (
	"context"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/where"
)

// ScanFiles is the number of data files a read of tbl's current snapshot
// plans with the part of x ReadWhere pushes (x nil: no filter).
func ScanFiles(ctx context.Context, tbl *table.Table, info *routes.TableInfo, x where.Expr) (int, error) {
	var f iceberg.BooleanExpression
	if x != nil {
		f, _ = rowFilter(x, info.Schema())
	}
	scan, err := newScan(tbl, tbl.CurrentSnapshot(), info, 0, nil, f, "", "", "")
	if err != nil {
		return 0, err
	}
	tasks, err := scan.PlanFiles(ctx)
	return len(tasks), err
}
