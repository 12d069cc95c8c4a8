// Package all registers every weir route; import it for its side effect:
//
//	import _ "github.com/weirhq/weir/routes/all"
package all

import (
	_ "github.com/weirhq/weir/routes/bigquery"   // bigquery://
	_ "github.com/weirhq/weir/routes/clickhouse" // clickhouse://, clickhouse+http(s)://
	_ "github.com/weirhq/weir/routes/githubapi"  // github+api://
	_ "github.com/weirhq/weir/routes/gsheets"    // gsheets:// (source)
	_ "github.com/weirhq/weir/routes/iceberg"    // iceberg://, iceberg+rest://
	_ "github.com/weirhq/weir/routes/mysql"      // mysql://, mariadb://
	_ "github.com/weirhq/weir/routes/objstore"   // s3://, gcs://, file:// and bare paths
	_ "github.com/weirhq/weir/routes/postgres"   // postgres://, postgresql://
)
