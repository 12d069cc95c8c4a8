package routes

import (
	"context"
	"strings"

	"github.com/weirhq/weir/routes/scheme"
)

// DestRef is where source table src lands on the destination dst: the one
// rule every path that writes follows (weir transfer, --schema, dagfile
// transfer tasks, log_based replicas and changelogs; docs/routes.md).
//
//   - the name is table's (--dest-table, dest_table:) when given, else src's;
//   - the schema is schema (--dest-schema, schema:) when given, else
//     table's own;
//   - else, when dst's URL names the database tables live in (MySQL,
//     ClickHouse: scheme.URLDatabase), that database — ClickHouse's
//     "default" for a URL with none; a MySQL URL with none is bad input;
//   - else src's schema (PostgreSQL: the same schema name; an unqualified
//     --dest-table stays unqualified, the server's current_schema()).
//
// dst may be nil (not known): the source's schema is kept.
func DestRef(dst *URL, src, table TableRef, schema string) (TableRef, error) {
	explicit := table.Name != ""
	if !explicit {
		table = src
	}
	if schema != "" {
		table.Schema = schema
		return table, nil
	}
	if dst == nil {
		return table, nil
	}
	def, ok := scheme.URLDatabase[dst.Scheme()]
	if !ok || (explicit && table.Schema != "") {
		return table, nil
	}
	db := strings.Trim(dst.URL().Path, "/")
	if db == "" {
		db = def
	}
	if db == "" {
		return table, &ProbeError{Table: src.String(), Problem: "the destination URL " + dst.String() + " names no database to write " + table.Name + " in",
			Hint: "add the database to the URL (" + dst.Scheme() + "://host/shop) or pass --dest-schema (dagfile: schema:)"}
	}
	table.Schema = db
	return table, nil
}

// Located is an endpoint that keeps the URL it was opened with; Copy
// applies DestRef with a destination's.
type Located interface {
	Location() *URL
}

// CaptureChecker is a log_based source (SchemeInfo.Capture) that can say,
// without changing anything, whether the server lets weir capture its
// changes: `weir conns test`. ok is false with why naming the setting
// (wal_level=replica, binlog_format=STATEMENT) and how to fix it; err is a
// failure to ask.
type CaptureChecker interface {
	CheckCapture(ctx context.Context) (ok bool, why string, err error)
}

// ReachChecker is an endpoint that can say, without a table and without
// changing anything, whether weir reaches it (`weir conns test`): an object
// store asks its bucket once, so refused credentials and a missing bucket
// fail there and not at a run's first read. empty is true when the store is
// known to hold nothing yet (a file root that does not exist): a destination
// creates it, but there is nothing to read.
type ReachChecker interface {
	CheckReach(ctx context.Context) (empty bool, err error)
}

// TableIdentifier is an endpoint that asks its server which table a name
// reaches: TableID is the server's own identity (not the URL's spelling:
// localhost or 127.0.0.1, another scheme or database in the URL, extra
// parameters) joined with the table as the server resolves it. Two
// endpoints reach the same table exactly when their TableIDs are equal. A
// table that does not exist is ErrNotFound.
type TableIdentifier interface {
	TableID(ctx context.Context, t TableRef) (string, error)
}
