package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestTransferLogJSON: --log-format json lines parse, all carry the run's id
// (the report's), info shows the steps with the committed rows, and debug
// shows the statements sent to PostgreSQL without the URL's password (the
// test server trusts loopback, so any password connects).
func TestTransferLogJSON(t *testing.T) {
	const n = 1000
	f := progressSource(t, n)
	const pw = "sekret-pw-42"
	src := strings.Replace(f.URL(), "root@", "root:"+pw+"@", 1)
	code, _, stderr := runCmdErr(t, "transfer", src, f.URL(), "--table", f.Ref("src"), "--dest-table", f.Ref("out"),
		"--log-level", "debug", "--log-format", "json", "--progress", "off")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if strings.Contains(stderr, pw) {
		t.Fatalf("the password is in the log:\n%s", stderr)
	}
	var runID string
	msgs := map[string][]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if !strings.HasPrefix(l, "{") {
			continue // the summary line
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		id, _ := rec["run_id"].(string)
		if id == "" || (runID != "" && id != runID) {
			t.Fatalf("line %q: run_id %q, want one id on every line (%q)", l, id, runID)
		}
		runID = id
		msgs[rec["msg"].(string)] = append(msgs[rec["msg"].(string)], rec)
	}
	for _, step := range []string{"probe", "plan", "prepare", "commit", "sql"} {
		if len(msgs[step]) == 0 {
			t.Errorf("no %q line in:\n%s", step, stderr)
		}
	}
	if c := msgs["commit"]; len(c) == 1 && c[0]["rows"] != float64(n) {
		t.Errorf("commit line %v, want rows=%d", c[0], n)
	}
	var copyOut bool
	for _, s := range msgs["sql"] {
		copyOut = copyOut || strings.HasPrefix(fmt.Sprint(s["stmt"]), "COPY (SELECT")
	}
	if !copyOut {
		t.Errorf("the source's COPY is not among the statements logged: %v", msgs["sql"])
	}
}

// TestTransferLogMySQLDebug: at debug a MySQL source's statements are
// logged (text format) and its password never is; at the default level
// nothing is logged.
func TestTransferLogMySQLDebug(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	my := mysqltest.New(t)
	pg := postgrestest.New(t)
	const pw = "sekret-pw-43"
	user := "u_" + my.Database
	my.Exec(t, ctx, "CREATE TABLE "+my.Ref("t")+" (id int PRIMARY KEY, s text)", "INSERT INTO "+my.Ref("t")+" VALUES (1, 'a'), (2, 'b')",
		fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", user, pw), fmt.Sprintf("GRANT ALL ON %s.* TO '%s'@'%%'", my.Database, user))
	t.Cleanup(func() { my.DB.Exec(fmt.Sprintf("DROP USER IF EXISTS '%s'@'%%'", user)) })
	u, err := url.Parse(my.URL())
	if err != nil {
		t.Fatal(err)
	}
	u.User, u.Path = url.UserPassword(user, pw), "/"+my.Database
	src := u.String()
	transfer := []string{"transfer", src, pg.URL(), "--table", my.Ref("t"), "--dest-table", pg.Ref("t"), "--progress", "off"}

	code, _, stderr := runCmdErr(t, append(transfer, "--log-level", "debug")...)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if strings.Contains(stderr, pw) {
		t.Fatalf("the password is in the log:\n%s", stderr)
	}
	stmt := regexp.MustCompile("level=DEBUG msg=sql run_id=\\w+ route=mysql .*stmt=\"SELECT `id`, `s` FROM")
	if !stmt.MatchString(stderr) {
		t.Errorf("no MySQL statement with a run_id at debug:\n%s", stderr)
	}
	code, _, stderr = runCmdErr(t, transfer...)
	if code != 0 || strings.Contains(stderr, "level=") {
		t.Errorf("exit %d; at the default level nothing is logged, got:\n%s", code, stderr)
	}
}
