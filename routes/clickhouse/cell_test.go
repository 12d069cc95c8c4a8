package clickhouse_test

import (
	"context"
	"testing"

	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
	_ "github.com/weirhq/weir/routes/clickhouse"
	"github.com/weirhq/weir/routes/clickhouse/clickhousetest"
	_ "github.com/weirhq/weir/routes/postgres"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// transfer runs one table the way package weir does: routes.Copy, with
// the incremental window for append and merge.
func transfer(ctx context.Context, srcURL, dstURL string, spec routes.CopySpec) error {
	_, err := copyURLs(ctx, srcURL, dstURL, spec)
	return err
}

func copyURLs(ctx context.Context, srcURL, dstURL string, spec routes.CopySpec) (routes.CopyResult, error) {
	return incremental.CopyURLs(ctx, srcURL, dstURL, spec, "")
}

func TestCell_ClickHouseToClickHouse(t *testing.T) {
	routestest.RunCell(t, clickhousetest.New(t), clickhousetest.New(t), routestest.Caps{Append: true}, transfer)
}

func TestCell_ClickHouseToClickHouseHTTP(t *testing.T) {
	routestest.RunCell(t, clickhousetest.New(t), clickhousetest.NewHTTP(t), routestest.Caps{Append: true}, transfer)
}

func TestCell_PostgresToClickHouse(t *testing.T) {
	routestest.RunCell(t, postgrestest.New(t), clickhousetest.New(t), routestest.Caps{Append: true}, transfer)
}

func TestCell_PostgresToClickHouseHTTP(t *testing.T) {
	routestest.RunCell(t, postgrestest.New(t), clickhousetest.NewHTTP(t), routestest.Caps{Append: true}, transfer)
}
