// Package mysqltest is the MySQL/MariaDB fixture of the routes matrix: a
// per-test database on the server named by WEIR_TEST_MYSQL.
package mysqltest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/weirhq/weir/routes/routestest"
)

// Env names the variable holding the test server's URL.
const Env = "WEIR_TEST_MYSQL"

var _ routestest.Fixture = (*Fixture)(nil)

// Fixture is one test's database on the test server.
type Fixture struct {
	DB       *sql.DB // connected to the server, in the fixture's database
	Database string  // weir_t_<random>
	url      string
}

// New connects to WEIR_TEST_MYSQL, turns on local_infile if it is off, and
// creates a database weir_t_<random>, dropped when the test ends.
func New(t testing.TB) *Fixture {
	t.Helper()
	raw := routestest.ServerURL(t, Env)
	ctx := routestest.Context(t, time.Minute)
	f := &Fixture{Database: routestest.Name("weir_t"), url: raw}
	admin := connect(t, raw, "")
	defer admin.Close()
	f.exec(t, ctx, admin, "CREATE DATABASE "+f.Database+" CHARACTER SET utf8mb4")
	enableLocalInfile(t, ctx, admin)
	f.DB = connect(t, raw, f.Database)
	t.Cleanup(func() {
		ctx, cancel := routestest.CleanupContext()
		defer cancel()
		f.DB.ExecContext(ctx, "DROP DATABASE IF EXISTS "+f.Database)
		f.DB.Close()
	})
	return f
}

// connect opens the server of a mysql:// URL, in database db (or the URL's).
func connect(t testing.TB, raw, db string) *sql.DB {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	cfg := driver.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net, cfg.Addr = "tcp", u.Host
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	if db != "" {
		cfg.DBName = db
	}
	cfg.Params = map[string]string{"time_zone": "'+00:00'"}
	cfg.InterpolateParams = true
	conn, err := driver.NewConnector(cfg)
	if err != nil {
		t.Fatalf("connect %s: %v", Env, err)
	}
	return sql.OpenDB(conn)
}

// enableLocalInfile: scripts/services.sh turns it on; a bare server may not.
func enableLocalInfile(t testing.TB, ctx context.Context, db *sql.DB) {
	var on int
	if err := db.QueryRowContext(ctx, "SELECT @@GLOBAL.local_infile").Scan(&on); err == nil && on == 0 {
		if _, err := db.ExecContext(ctx, "SET GLOBAL local_infile = 1"); err != nil {
			t.Logf("local_infile is off and cannot be turned on: %v", err)
		}
	}
}

func (f *Fixture) exec(t testing.TB, ctx context.Context, db *sql.DB, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// Exec runs statements in the fixture's database or fails the test.
func (f *Fixture) Exec(t testing.TB, ctx context.Context, qs ...string) {
	t.Helper()
	f.exec(t, ctx, f.DB, qs...)
}

// Hash returns the md5 of every row's CONCAT_WS text, in orderBy order,
// and the row count. cols are SQL expressions (NULLs render as "\N").
func (f *Fixture) Hash(t testing.TB, ctx context.Context, table, orderBy string, cols ...string) (string, int64) {
	t.Helper()
	exprs := make([]string, len(cols))
	for i, c := range cols {
		exprs[i] = fmt.Sprintf("COALESCE(CAST(%s AS CHAR CHARACTER SET utf8mb4), '\\\\N')", c)
	}
	var h sql.NullString
	var n int64
	q := fmt.Sprintf("SELECT MD5(GROUP_CONCAT(CONCAT_WS('|', %s) ORDER BY %s SEPARATOR '\\n')), COUNT(*) FROM %s",
		strings.Join(exprs, ", "), orderBy, table)
	conn, err := f.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.ExecContext(ctx, "SET SESSION group_concat_max_len = 1073741824")
	if err := conn.QueryRowContext(ctx, q).Scan(&h, &n); err != nil {
		t.Fatalf("hash %s: %v", table, err)
	}
	return h.String, n
}

// URL is the server URL; tables are database-qualified.
func (f *Fixture) URL() string { return f.url }

// Ref qualifies a table with the fixture's database.
func (f *Fixture) Ref(name string) string { return f.Database + "." + name }

// Create makes the conformance table.
func (f *Fixture) Create(t testing.TB, ctx context.Context, name string, rows []routestest.Row) {
	f.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id BIGINT PRIMARY KEY, name LONGTEXT NULL, amount DECIMAL(12,2) NULL, ts DATETIME NULL, flag BOOLEAN NULL) ENGINE=InnoDB", f.Ref(name)))
	f.Insert(t, ctx, name, rows)
}

// CreateKeyless makes a table of one nullable BIGINT column, id, with no
// primary key (routestest.SourceFixture).
func (f *Fixture) CreateKeyless(t testing.TB, ctx context.Context, name string, ids []*int64) {
	t.Helper()
	f.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id BIGINT NULL) ENGINE=InnoDB", f.Ref(name)))
	for len(ids) > 0 {
		n := min(len(ids), 500)
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		q := fmt.Sprintf("INSERT INTO %s (id) VALUES %s", f.Ref(name), strings.TrimSuffix(strings.Repeat("(?),", n), ","))
		if _, err := f.DB.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("insert into %s: %v", name, err)
		}
		ids = ids[n:]
	}
}

// Insert adds conformance rows, 500 to a statement.
func (f *Fixture) Insert(t testing.TB, ctx context.Context, name string, rows []routestest.Row) {
	t.Helper()
	for len(rows) > 0 {
		n := min(len(rows), 500)
		var args []any
		for _, r := range rows[:n] {
			args = append(args, r.ID, r.Name, r.Amount, tsArg(r.TS), r.Flag)
		}
		q := fmt.Sprintf("INSERT INTO %s (id, name, amount, ts, flag) VALUES %s", f.Ref(name),
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?),", n), ","))
		if _, err := f.DB.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("insert into %s: %v", name, err)
		}
		rows = rows[n:]
	}
}

func tsArg(ts *time.Time) any {
	if ts == nil {
		return nil
	}
	return ts.UTC().Format("2006-01-02 15:04:05")
}

// Read returns the table's rows by id, and false if it does not exist.
func (f *Fixture) Read(t testing.TB, ctx context.Context, name string) ([]routestest.Row, bool) {
	t.Helper()
	if !f.exists(t, ctx, name) {
		return nil, false
	}
	rows, err := f.DB.QueryContext(ctx, fmt.Sprintf(`SELECT id, name, CAST(amount AS CHAR), DATE_FORMAT(ts, '%%Y-%%m-%%dT%%H:%%i:%%sZ'), flag FROM %s ORDER BY id`, f.Ref(name)))
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	defer rows.Close()
	var out []routestest.Row
	for rows.Next() {
		out = append(out, scanRow(t, rows))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return out, true
}

func scanRow(t testing.TB, rows *sql.Rows) routestest.Row {
	t.Helper()
	var r routestest.Row
	var ts sql.NullString
	var flag sql.NullInt64
	if err := rows.Scan(&r.ID, &r.Name, &r.Amount, &ts, &flag); err != nil {
		t.Fatalf("scan: %v", err)
	}
	if ts.Valid {
		v, err := time.Parse(time.RFC3339, ts.String)
		if err != nil {
			t.Fatalf("ts %q: %v", ts.String, err)
		}
		r.TS = &v
	}
	if flag.Valid {
		b := flag.Int64 != 0
		r.Flag = &b
	}
	return r
}

func (f *Fixture) exists(t testing.TB, ctx context.Context, name string) bool {
	t.Helper()
	var n int
	err := f.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`, f.Database, name).Scan(&n)
	if err != nil {
		t.Fatalf("look up %s: %v", name, err)
	}
	return n > 0
}

// Staging lists the staging (and replaced, not yet dropped) tables left in
// the database for name.
func (f *Fixture) Staging(t testing.TB, ctx context.Context, name string) []string {
	t.Helper()
	rows, err := f.DB.QueryContext(ctx, `SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?`, f.Database)
	if err != nil {
		t.Fatalf("list staging: %v", err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatalf("list staging: %v", err)
		}
		if sideTable(name, n) {
			names = append(names, n)
		}
	}
	return names
}

// sideTable reports whether n is _weir_stage_<name>_<run> or
// _weir_old_<name>_<run>.
func sideTable(name, n string) bool {
	re := `^_weir_(stage|old)_` + regexp.QuoteMeta(name) + `_[^_]+$`
	ok, _ := regexp.MatchString(re, n)
	return ok
}
