package weir_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestTransfer_BadInput: each mistake fails before a row moves, with a
// message that names the problem and never the password.
func TestTransfer_BadInput(t *testing.T) {
	f := postgrestest.New(t)
	ctx := routestest.Context(t, time.Minute)
	pg := f.URL()
	withPassword := strings.Replace(pg, "://root@", "://root:s3cr3t-pw@", 1)
	unknownUser, err := url.Parse(pg) // on the test server: the machine's own is never asked
	if err != nil {
		t.Fatal(err)
	}
	unknownUser.User, unknownUser.Path = url.UserPassword("nobody_weir", "s3cr3t-pw"), "/nodb_weir"
	tests := []struct {
		name, src, dst, table string
		want                  string
		badInput              bool
	}{
		{"unknown table", pg, pg, f.Schema + ".nope", "no such table", true},
		{"unknown schema", pg, pg, "nope_schema.t", "no such table", true},
		{"unknown scheme", "oracle://u:s3cr3t-pw@h/db", pg, "a.b", `unknown scheme "oracle"`, true},
		{"bad URL", "postgres://u:s3cr3t-pw@h:port/db", pg, "a.b", "cannot parse URL", true},
		{"unreachable host", "postgres://u:s3cr3t-pw@127.0.0.1:1/db?connect_timeout=2", pg, "a.b", "connect", false},
		{"wrong password", withPassword, unknownUser.String(), f.Schema + ".x", "check the user, password", true},
		{"bad table name", pg, pg, "a..b", "empty name part", true},
		{"no table", pg, pg, "", "no table to transfer", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tables []string
			if tc.table != "" {
				tables = []string{tc.table}
			}
			_, err := weir.Transfer(ctx, tc.src, tc.dst, weir.TransferOptions{Tables: tables})
			if err == nil {
				t.Fatal("want an error")
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("message %q does not say %q", msg, tc.want)
			}
			if strings.Contains(msg, "s3cr3t-pw") {
				t.Errorf("message leaks the password: %q", msg)
			}
			if got := errors.Is(err, routes.ErrBadInput); got != tc.badInput {
				t.Errorf("errors.Is(err, ErrBadInput) = %v, want %v (%v)", got, tc.badInput, err)
			}
		})
	}
}
