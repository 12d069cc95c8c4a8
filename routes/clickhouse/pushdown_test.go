package clickhouse

import (
	"testing"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// The statement a filtered read sends: the range's predicate AND the
// pushable part of the filter, quoted and typed for ClickHouse, where a
// decimal literal (a Float64 there) is never pushed.
func TestReadWhere_SQL(t *testing.T) {
	e := &Endpoint{relayState: 2} // no HTTP relay: the Native stream
	got := routestest.PushedSQL(t, e, routestest.PushdownTable(Scheme), "`id` >= 1", func(s routes.Stream) string { return s.(*stream).sql(rawExpr) })
	sel := "FROM `s`.`t` WHERE `id` >= 1"
	tail := " SETTINGS max_block_size = 43690"
	want := []string{
		sel + " AND `id` > 1999990" + tail,
		sel + " AND `name` = 'it\\'s'" + tail,
		sel + tail,
		sel + tail,
		sel + " AND ((NOT (`we\"ird\\`'` IS NULL)) AND `id` <= -9223372036854775808)" + tail,
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s:\n got %s\nwant %s", routestest.PushdownFilters[i], got[i], want[i])
		}
	}
}
