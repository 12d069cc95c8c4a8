package main

import (
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/clickhouse/clickhousetest"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestConnectErrorOneLine: a refused connection or password is one line
// that names the URL once (secrets masked), for each database route.
func TestConnectErrorOneLine(t *testing.T) {
	pg := postgrestest.New(t)
	my := mysqltest.New(t)
	for _, tc := range []struct {
		name, src string
		code      int
	}{
		{"postgres refused", "postgres://root:sekret@127.0.0.1:1/x?connect_timeout=5", 1},
		{"postgres no database", strings.Replace(pg.URL(), "root@", "root:sekret@", 1) + "&dbname=wt_nosuch_db", 2},
		{"mysql refused", "mysql://root:sekret@127.0.0.1:1/x", 1},
		{"mysql bad password", strings.Replace(my.URL(), "root@", "root:sekret@", 1), 2},
		{"clickhouse refused", "clickhouse://default:sekret@127.0.0.1:1/x", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := runErr(t, "transfer", tc.src, pg.URL(), "--table", "public.t", "--progress", "off")
			if code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, msg)
			}
			if strings.Contains(msg, "\n") || strings.Contains(msg, "sekret") || strings.Count(msg, "127.0.0.1:") == 0 {
				t.Errorf("not one scrubbed line naming the server: %q", msg)
			}
			if strings.Count(msg, "://") != 1 {
				t.Errorf("URL named %d times, want once: %q", strings.Count(msg, "://"), msg)
			}
		})
	}
}

// TestTransferDidYouMean: a mistyped table is bad input naming the closest
// table of the schema, on each route whose probe can list tables; a name
// close to nothing gets no guess.
func TestTransferDidYouMean(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	pg := postgrestest.New(t)
	pg.Exec(t, ctx, "CREATE TABLE "+pg.Ref("orders")+" (id int)", "CREATE TABLE "+pg.Ref("customers")+" (id int)")
	my := mysqltest.New(t)
	my.Exec(t, ctx, "CREATE TABLE "+my.Ref("orders")+" (id int)", "CREATE TABLE "+my.Ref("customers")+" (id int)")
	ch := clickhousetest.New(t)
	ch.Exec(t, ctx, "CREATE TABLE "+ch.Ref("orders")+" (id Int32) ENGINE = MergeTree ORDER BY id", "CREATE TABLE "+ch.Ref("customers")+" (id Int32) ENGINE = MergeTree ORDER BY id")
	for _, src := range []struct {
		name string
		url  string
		ref  func(string) string
	}{{"postgres", pg.URL(), pg.Ref}, {"mysql", my.URL(), my.Ref}, {"clickhouse", ch.URL(), ch.Ref}} {
		for _, tc := range []struct{ typed, want string }{
			{"ordres", "did you mean " + src.ref("orders") + "?"},
			{"Customer", "did you mean " + src.ref("customers") + "?"},
			{"zzzzzz", ""},
		} {
			t.Run(src.name+"/"+tc.typed, func(t *testing.T) {
				code, msg := runErr(t, "transfer", src.url, pg.URL(), "--table", src.ref(tc.typed), "--dest-table", pg.Ref("out"), "--progress", "off")
				if code != 2 || !strings.Contains(msg, "no such table") {
					t.Fatalf("exit %d, %q; want 2 and no such table", code, msg)
				}
				if tc.want == "" && strings.Contains(msg, "did you mean") {
					t.Errorf("a guess for a name close to nothing: %q", msg)
				}
				if !strings.Contains(msg, tc.want) {
					t.Errorf("%q lacks %q", msg, tc.want)
				}
				if strings.Count(msg, src.ref(tc.typed)) != 1 {
					t.Errorf("table named %d times: %q", strings.Count(msg, src.ref(tc.typed)), msg)
				}
			})
		}
	}
}

// TestBadSchemeSpeaksCLI: an unknown scheme lists the schemes that work and
// says nothing of Go imports; a stream scheme points to stream tasks.
func TestBadSchemeSpeaksCLI(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"foo://h/db", `unknown scheme "foo"`},
		{"postgress://h/db", `unknown scheme "postgress"`},
		{"kafka://h/topic", "stream task"},
	} {
		code, msg := runErr(t, "transfer", tc.src, "file:///tmp/x", "--table", "a.b", "--progress", "off")
		if code != 2 || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "postgres://") || !strings.Contains(msg, "mysql://") || strings.Contains(msg, "import") {
			t.Errorf("%s: exit %d, %q", tc.src, code, msg)
		}
	}
}

// TestRoutesListsStreamSchemes: weir routes names the table and the stream
// schemes.
func TestRoutesListsStreamSchemes(t *testing.T) {
	code, out := runCmd(t, "routes")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, s := range []string{"postgres", "mysql", "clickhouse", "iceberg", "s3", "kafka", "pubsub", "sse", "ws", "sqs"} {
		if !strings.Contains(strings.SplitN(out, "\n\n", 2)[0], " "+s) {
			t.Errorf("weir routes does not list %s:\n%s", s, out)
		}
	}
}
