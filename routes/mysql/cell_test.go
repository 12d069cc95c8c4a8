package mysql

import (
	"context"
	"testing"

	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestRunCell_MySQLToMySQL runs the matrix's conformance cell on the pair
// the lead flips to implemented.
func TestRunCell_MySQLToMySQL(t *testing.T) {
	src, dst := mysqltest.New(t), mysqltest.New(t)
	routestest.RunCell(t, src, dst, routestest.Caps{Append: true, Merge: true}, transfer)
}

// TestRunCell_SameDatabase: source and destination tables in one database.
func TestRunCell_SameDatabase(t *testing.T) {
	f := mysqltest.New(t)
	other := &renamed{Fixture: f, prefix: "d_"}
	routestest.RunCell(t, f, other, routestest.Caps{Append: true, Merge: true}, transfer)
}

// renamed puts a fixture's tables under a name prefix, so one database can
// be both ends of a cell.
type renamed struct {
	*mysqltest.Fixture
	prefix string
}

func (r *renamed) Ref(name string) string { return r.Fixture.Ref(r.prefix + name) }
func (r *renamed) Read(t testing.TB, ctx context.Context, name string) ([]routestest.Row, bool) {
	return r.Fixture.Read(t, ctx, r.prefix+name)
}
func (r *renamed) Staging(t testing.TB, ctx context.Context, name string) []string {
	return r.Fixture.Staging(t, ctx, r.prefix+name)
}
