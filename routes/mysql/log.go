package mysql

import (
	"context"
	sqldriver "database/sql/driver"

	"github.com/weirhq/weir/routes"
)

// loggingConnector hands out connections that log each statement at debug
// (routes.LogSQL) before the driver runs it: database/sql has no tracer.
type loggingConnector struct {
	sqldriver.Connector
	u *routes.URL
}

func (c loggingConnector) Connect(ctx context.Context) (sqldriver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	mc, ok := conn.(mysqlConn)
	if !ok { // another driver version: run unlogged rather than lose a method
		return conn, nil
	}
	return &loggingConn{mysqlConn: mc, u: c.u}, nil
}

// mysqlConn is what go-sql-driver's connection implements and database/sql
// looks for; loggingConn keeps every method by embedding it.
type mysqlConn interface {
	sqldriver.Conn
	sqldriver.ConnBeginTx
	sqldriver.ConnPrepareContext
	sqldriver.ExecerContext
	sqldriver.QueryerContext
	sqldriver.Pinger
	sqldriver.SessionResetter
	sqldriver.Validator
	sqldriver.NamedValueChecker
}

type loggingConn struct {
	mysqlConn
	u *routes.URL
}

func (c *loggingConn) ExecContext(ctx context.Context, q string, args []sqldriver.NamedValue) (sqldriver.Result, error) {
	routes.LogSQL(ctx, c.u, q)
	return c.mysqlConn.ExecContext(ctx, q, args)
}

func (c *loggingConn) QueryContext(ctx context.Context, q string, args []sqldriver.NamedValue) (sqldriver.Rows, error) {
	routes.LogSQL(ctx, c.u, q)
	return c.mysqlConn.QueryContext(ctx, q, args)
}

func (c *loggingConn) PrepareContext(ctx context.Context, q string) (sqldriver.Stmt, error) {
	routes.LogSQL(ctx, c.u, q)
	return c.mysqlConn.PrepareContext(ctx, q)
}
