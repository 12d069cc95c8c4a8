package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir/routes"
)

// sqlTracer logs each Query, QueryRow and Exec at debug (routes.LogSQL);
// the COPYs sent through PgConn bypass pgx's tracer and log themselves.
type sqlTracer struct{ u *routes.URL }

func (t sqlTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	routes.LogSQL(ctx, t.u, d.SQL)
	return ctx
}

func (sqlTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
