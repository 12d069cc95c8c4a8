package mysql

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestSession_Strict: every connection weir opens runs in its own strict
// sql_mode, whatever the server's global one (a server whose global mode
// is not strict stores '?' for a character a latin1 column cannot hold,
// and cuts a too-long value, with a warning only: exit 0, different data).
// The session's mode is read back on connections of weir's pool, so the
// test changes nothing on the shared server. A URL that sets sql_mode
// itself, in any case (the server takes SQL_MODE too), is refused as bad
// input: it used to replace weir's mode (sql_mode=” made weir's session
// lax; SQL_MODE=” did or did not, by the order of a Go map).
func TestSession_Strict(t *testing.T) {
	f := mysqltest.New(t)
	ctx := routestest.Context(t, time.Minute)
	e := openEndpoint(t, f, "")
	for i := range 3 { // three connections of the pool held at once: each ran the driver's SETs
		c, err := e.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var mode string
		if err := c.QueryRowContext(ctx, "SELECT @@SESSION.sql_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"STRICT_ALL_TABLES", "NO_ENGINE_SUBSTITUTION"} {
			if !strings.Contains(mode, want) {
				t.Fatalf("connection %d: @@SESSION.sql_mode = %q, want %s", i, mode, want)
			}
		}
		for _, not := range []string{"NO_BACKSLASH_ESCAPES", "ANSI_QUOTES"} {
			if strings.Contains(mode, not) {
				t.Fatalf("connection %d: @@SESSION.sql_mode = %q has %s", i, mode, not)
			}
		}
	}
	for _, q := range []string{"sql_mode=%27%27", "sql_mode=%27ANSI_QUOTES%27", "SQL_MODE=%27%27", "Sql_Mode=%27NO_BACKSLASH_ESCAPES%27"} {
		t.Run(q, func(t *testing.T) {
			ep, err := routes.Open(ctx, fixtureURL(f, q))
			if err == nil {
				var mode string
				ep.(*Endpoint).db.QueryRowContext(ctx, "SELECT @@SESSION.sql_mode").Scan(&mode)
				ep.Close()
				t.Fatalf("opened with session sql_mode %q, want bad input naming sql_mode", mode)
			}
			if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(strings.ToLower(err.Error()), "sql_mode") {
				t.Fatalf("err = %v, want bad input naming sql_mode", err)
			}
		})
	}
}
