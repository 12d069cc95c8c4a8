package mysqltest

import (
	"context"

	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

// Transfer is a routestest.TransferFunc that runs one table the way weir
// does (incremental.CopyURLs): append and merge read past the watermark
// the destination saved, on the table's primary key.
func Transfer(ctx context.Context, srcURL, dstURL string, spec routes.CopySpec) error {
	_, err := incremental.CopyURLs(ctx, srcURL, dstURL, spec, "")
	return err
}
