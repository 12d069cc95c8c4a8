package mysql_test

import (
	"testing"

	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestContract runs routes' source and destination contract (routestest)
// against the MySQL/MariaDB test server.
func TestContract(t *testing.T) {
	caps := routestest.CapsOf("mysql")
	t.Run("source", func(t *testing.T) { routestest.RunSourceTests(t, mysqltest.New(t), caps) })
	t.Run("destination", func(t *testing.T) { routestest.RunDestinationTests(t, mysqltest.New(t), caps) })
}
