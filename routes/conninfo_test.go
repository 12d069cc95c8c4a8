package routes

import (
	"errors"
	"strings"
	"testing"
)

// TestParseURL_Conninfo: a libpq key=value string is not a URL weir reads;
// taken as a path it became a directory named after the credentials
// (password included) that weir conns test called ok. It is bad input that
// never repeats the password; a path that merely holds "=" stays a path.
func TestParseURL_Conninfo(t *testing.T) {
	for _, raw := range []string{
		"host=127.0.0.1 port=15432 user=root password=TopSecret1 dbname=test",
		"dbname=test",
		"host=localhost  dbname=shop sslmode=disable",
		"service=prod",
		"user=app password='Top Secret1' host=db",
		"HOST=db DBNAME=x",
	} {
		_, err := ParseURL(raw)
		if !errors.Is(err, ErrBadInput) {
			t.Errorf("ParseURL(%q) = %v, want bad input", raw, err)
			continue
		}
		if strings.Contains(err.Error(), "TopSecret1") || strings.Contains(err.Error(), "Top Secret1") {
			t.Errorf("ParseURL(%q): the error repeats the password: %v", raw, err)
		}
	}
	for _, raw := range []string{"dt=2024-01-01", "./host=db", "out/dbname=x", "a=b c=d", "data"} {
		u, err := ParseURL(raw)
		if err != nil || u.Scheme() != "file" {
			t.Errorf("ParseURL(%q) = %v, %v, want a file path", raw, u, err)
		}
	}
}
