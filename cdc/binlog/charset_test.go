package binlog

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// TestRun_NonUTF8ColumnRefused: the binlog carries a text column's bytes
// in the column's own character set, and the capture hands them on as
// UTF-8; a latin1 'Ã©' (C3 A9) landed as 'é' and a ucs2 'ab' as
// "\x00a\x00b", exit 0 (attack s14). A table with such a column (text,
// ENUM) is refused before the bootstrap, exit 2, naming the column and its
// character set, and nothing is created at the destination; utf8mb4, utf8,
// ascii and binary columns run.
func TestRun_NonUTF8ColumnRefused(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, "postgres")
	for _, c := range []struct{ name, typ, charset string }{
		{"lat", "VARCHAR(20) CHARACTER SET latin1", "latin1"},
		{"latt", "TEXT CHARACTER SET latin1", "latin1"},
		{"ucs", "VARCHAR(10) CHARACTER SET ucs2", "ucs2"},
		{"lenum", "ENUM('é', 'x') CHARACTER SET latin1", "latin1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, ok VARCHAR(5) CHARACTER SET utf8mb4, v %s)", src.Table(c.name), c.typ))
			cfg := Config{SourceURL: src.URL, DestURL: dst.URL, Tables: []Pair{{Source: src.Ref(c.name), Dest: dst.Ref(c.name)}}}
			_, err := Run(ctx, cfg)
			if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "v ") && !strings.Contains(err.Error(), ".v") || !strings.Contains(err.Error(), c.charset) {
				t.Fatalf("run = %v; want bad input naming column v and %s", err, c.charset)
			}
			t.Log(err)
			if got := dst.Query(t, ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = '"+dst.Schema+"' AND tablename = '"+c.name+"'"); got != "0" {
				t.Errorf("the destination has table %s after the refusal", c.name)
			}
		})
	}
	t.Run("utf8-ascii-binary", func(t *testing.T) {
		src.Exec(t, ctx, "CREATE TABLE "+src.Table("fine")+" (id INT PRIMARY KEY, a VARCHAR(5) CHARACTER SET utf8mb4, b VARCHAR(5) CHARACTER SET utf8mb3, c VARCHAR(5) CHARACTER SET ascii, d VARBINARY(5))")
		src.Exec(t, ctx, "INSERT INTO "+src.Table("fine")+" VALUES (1, 'é', 'ü', 'x', 'y')")
		cfg := Config{SourceURL: src.URL, DestURL: dst.URL, Tables: []Pair{{Source: src.Ref("fine"), Dest: dst.Ref("fine")}}}
		if _, err := Run(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		src.Exec(t, ctx, "INSERT INTO "+src.Table("fine")+" VALUES (2, 'ß', 'ø', 'z', 'w')")
		if _, err := Run(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		if got := dst.Query(t, ctx, "SELECT string_agg(a || b || c, ' ' ORDER BY id) FROM "+dst.Table("fine")); got != "éüx ßøz" {
			t.Errorf("destination %q, want %q", got, "éüx ßøz")
		}
	})
}

// TestRun_NonUTF8Defaults: the refusal reads each column's own character
// set, whatever the table's default says: a table whose default is latin1
// is refused for a column that inherits it (text, ENUM, SET, a binary
// collation), and runs when every text column says utf8mb4 itself; a
// latin1 column added by ALTER after the bootstrap is refused at the next
// run, before its rows are read.
func TestRun_NonUTF8Defaults(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, "postgres")
	for _, c := range []struct{ name, cols, table string }{
		{"inherits", "v VARCHAR(5)", "DEFAULT CHARSET=latin1"},
		{"enum", "v ENUM('a','é')", "DEFAULT CHARSET=latin1"},
		{"set", "v SET('a','b')", "DEFAULT CHARSET=latin1"},
		{"bincoll", "v VARCHAR(5) COLLATE latin1_bin", "DEFAULT CHARSET=utf8mb4"},
		{"cp1251", "v TEXT", "DEFAULT CHARSET=cp1251"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, %s) %s", src.Table("d_"+c.name), c.cols, c.table))
			cfg := Config{SourceURL: src.URL, DestURL: dst.URL, Tables: []Pair{{Source: src.Ref("d_" + c.name), Dest: dst.Ref("d_" + c.name)}}}
			if _, err := Run(ctx, cfg); !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), ".v") && !strings.Contains(err.Error(), "v ") {
				t.Errorf("run = %v; want bad input naming column v", err)
			}
		})
	}
	t.Run("own-utf8mb4-and-later-alter", func(t *testing.T) {
		src.Exec(t, ctx, "CREATE TABLE "+src.Table("d_own")+" (id INT PRIMARY KEY, v VARCHAR(5) CHARACTER SET utf8mb4, b VARBINARY(4)) DEFAULT CHARSET=latin1")
		src.Exec(t, ctx, "INSERT INTO "+src.Table("d_own")+" VALUES (1, 'é', 'x')")
		cfg := Config{SourceURL: src.URL, DestURL: dst.URL, Tables: []Pair{{Source: src.Ref("d_own"), Dest: dst.Ref("d_own")}}}
		if _, err := Run(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		src.Exec(t, ctx, "ALTER TABLE "+src.Table("d_own")+" ADD COLUMN w VARCHAR(5)") // the table's default: latin1
		src.Exec(t, ctx, "INSERT INTO "+src.Table("d_own")+" VALUES (2, 'ü', 'y', 'Ã©')")
		_, err := Run(ctx, cfg)
		if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), ".w") && !strings.Contains(err.Error(), "w ") || !strings.Contains(err.Error(), "latin1") {
			t.Errorf("the run after ADD COLUMN w (latin1) = %v; want bad input naming w and latin1", err)
		}
		if got := dst.Query(t, ctx, "SELECT string_agg(id || '=' || v, ' ' ORDER BY id) FROM "+dst.Table("d_own")); got != "1=é" {
			t.Errorf("the replica holds %q after the refusal; want 1=é", got)
		}
	})
}
