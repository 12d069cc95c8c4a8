package mysql

import (
	"testing"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// The statement a filtered read sends: the range's predicate AND the
// pushable part of the filter, quoted and typed for MySQL/MariaDB.
func TestReadWhere_SQL(t *testing.T) {
	got := routestest.PushedSQL(t, &Endpoint{}, routestest.PushdownTable(Scheme), "`id` >= 1", func(s routes.Stream) string { return s.(*stream).sql })
	sel := "FROM `s`.`t` WHERE `id` >= 1"
	want := []string{
		sel + " AND `id` > 1999990",
		sel + " AND `name` = 'it''s'",
		sel + " AND (`amount` >= 12.5 OR `flag` = TRUE)",
		sel,
		sel + " AND ((NOT (`we\"ird``'` IS NULL)) AND `id` <= -9223372036854775808)",
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s:\n got %s\nwant %s", routestest.PushdownFilters[i], got[i], want[i])
		}
	}
}
