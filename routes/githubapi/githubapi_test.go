package githubapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/githubapi"
	"github.com/weirhq/weir/routes/githubapi/githubapitest"
	_ "github.com/weirhq/weir/routes/postgres"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

const repo = "acme/widgets"

var base = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(sec int) string { return base.Add(time.Duration(sec) * time.Second).Format(time.RFC3339) }

func user(id int, login string) map[string]any { return map[string]any{"id": id, "login": login} }

func issue(id, updated int, title string) map[string]any {
	return map[string]any{"id": id, "node_id": fmt.Sprint("I_", id), "number": id, "title": title, "state": "open",
		"state_reason": nil, "locked": false, "user": user(7, "octo"), "assignee": nil, "milestone": nil, "comments": 2,
		"author_association": "OWNER", "body": "body " + title, "html_url": "https://example.test/" + strconv.Itoa(id),
		"created_at": at(0), "updated_at": at(updated), "closed_at": nil, "extra_field": map[string]any{"kept": true}}
}

func pull(id, updated int) map[string]any {
	return map[string]any{"id": id, "number": id, "title": "pr " + strconv.Itoa(id), "state": "closed", "locked": false, "draft": true,
		"user": user(8, "hub"), "body": nil, "head": map[string]any{"ref": "feature", "sha": "abc"}, "base": map[string]any{"ref": "main"},
		"merge_commit_sha": "def", "created_at": at(0), "updated_at": at(updated), "closed_at": at(updated), "merged_at": at(updated)}
}

func comment(id, updated int) map[string]any {
	return map[string]any{"id": id, "issue_url": "https://example.test/issues/1", "user": user(7, "octo"), "body": "c" + strconv.Itoa(id),
		"created_at": at(0), "updated_at": at(updated)}
}

func commit(sha string, date int) map[string]any {
	return map[string]any{"sha": sha, "node_id": "C_" + sha, "commit": map[string]any{"message": "msg " + sha,
		"author":    map[string]any{"name": "A", "email": "a@example.test", "date": at(date - 1)},
		"committer": map[string]any{"name": "C", "email": "c@example.test", "date": at(date)}},
		"author": user(7, "octo"), "committer": nil, "html_url": "https://example.test/c/" + sha}
}

// peer is a repository with a few rows in every listing, issues over
// three pages (with a pull request among them, which the issues table
// leaves out).
func peer(t *testing.T) *githubapitest.Server {
	s := githubapitest.NewServer(t)
	s.PageSize = 2
	s.CreateRepo(repo)
	for i := 1; i <= 5; i++ {
		s.Put(repo, "issues", issue(i, i*10, "issue "+strconv.Itoa(i)))
	}
	prIssue := issue(100, 25, "a pull request")
	prIssue["pull_request"] = map[string]any{"url": "https://example.test/pulls/100"}
	s.Put(repo, "issues", prIssue)
	for i := 1; i <= 5; i++ {
		s.Put(repo, "pulls", pull(100+i, i*10))
		s.Put(repo, "issues/comments", comment(200+i, i*10))
		s.Put(repo, "commits", commit(fmt.Sprintf("sha%d", i), i*10))
	}
	s.Put(repo, "stargazers", map[string]any{"starred_at": at(1), "user": user(9, "fan")})
	s.Put(repo, "releases", map[string]any{"id": 300, "tag_name": "v1", "name": "One", "target_commitish": "main", "draft": false,
		"prerelease": true, "author": user(7, "octo"), "body": "notes", "created_at": at(1), "published_at": nil})
	s.Put(repo, "actions/runs", map[string]any{"id": 400, "name": "CI", "workflow_id": 41, "run_number": 3, "run_attempt": 1,
		"event": "push", "status": "completed", "conclusion": "success", "head_branch": "main", "head_sha": "abc",
		"actor": user(7, "octo"), "created_at": at(1), "updated_at": at(2), "run_started_at": at(1)})
	s.Put(repo, "branches", map[string]any{"name": "main", "commit": map[string]any{"sha": "abc", "url": "u"}, "protected": true})
	s.Put(repo, "tags", map[string]any{"name": "v1", "commit": map[string]any{"sha": "abc"}, "zipball_url": "z", "tarball_url": "t", "node_id": "T1"})
	s.Put(repo, "labels", map[string]any{"id": 500, "node_id": "L1", "name": "bug", "color": "d73a4a", "description": nil, "default": true})
	return s
}

func srcURL(s *githubapitest.Server) string {
	return "github+api://" + repo + "?endpoint=" + s.URL
}

func open(t *testing.T, ctx context.Context, url string) routes.Source {
	t.Helper()
	src, err := routes.OpenSource(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// read returns the table's rows as column → value text, in listing order.
func read(t *testing.T, ctx context.Context, src routes.Source, table string, opts routes.ReadOptions) ([]map[string]string, *routes.TableInfo) {
	t.Helper()
	info, err := src.Probe(ctx, routes.TableRef{Name: table})
	if err != nil {
		t.Fatal(err)
	}
	ranges, err := src.Plan(ctx, info, routes.PlanOptions{Pipes: 1})
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range ranges {
		st, err := src.Read(ctx, r, opts)
		if err != nil {
			t.Fatal(err)
		}
		for st.Next() {
			rec := st.RecordBatch()
			for i := 0; i < int(rec.NumRows()); i++ {
				row := map[string]string{}
				for j, f := range rec.Schema().Fields() {
					c := rec.Column(j)
					switch {
					case c.IsNull(i):
						row[f.Name] = "NULL"
					case f.Type.ID() == arrow.TIMESTAMP:
						row[f.Name] = time.UnixMicro(int64(c.(*array.Timestamp).Value(i))).UTC().Format(time.RFC3339)
					default:
						row[f.Name] = c.ValueStr(i)
					}
				}
				out = append(out, row)
			}
		}
		if err := st.Err(); err != nil {
			st.Release()
			t.Fatalf("read %s: %v", table, err)
		}
		st.Release()
	}
	return out, info
}

func count(reqs []string, sub string) int {
	n := 0
	for _, r := range reqs {
		if strings.Contains(r, sub) {
			n++
		}
	}
	return n
}

// documented are the tables' columns as docs/routes-api.md lists them.
var documented = map[string]string{
	"issues":         "id bigint, node_id text, number bigint, title text, state text, state_reason text, locked boolean, user_login text, assignee_login text, milestone_title text, comments bigint, author_association text, body text, html_url text, created_at timestamptz, updated_at timestamptz, closed_at timestamptz, raw json",
	"pull_requests":  "id bigint, node_id text, number bigint, title text, state text, locked boolean, draft boolean, user_login text, body text, head_ref text, head_sha text, base_ref text, merge_commit_sha text, author_association text, html_url text, created_at timestamptz, updated_at timestamptz, closed_at timestamptz, merged_at timestamptz, raw json",
	"issue_comments": "id bigint, node_id text, issue_url text, user_login text, body text, author_association text, html_url text, created_at timestamptz, updated_at timestamptz, raw json",
	"commits":        "sha text, node_id text, message text, author_name text, author_email text, authored_at timestamptz, author_login text, committer_name text, committer_email text, committed_at timestamptz, committer_login text, html_url text, raw json",
	"stargazers":     "id bigint, login text, starred_at timestamptz, raw json",
	"releases":       "id bigint, node_id text, tag_name text, name text, target_commitish text, draft boolean, prerelease boolean, author_login text, body text, html_url text, created_at timestamptz, published_at timestamptz, raw json",
	"workflow_runs":  "id bigint, node_id text, name text, workflow_id bigint, run_number bigint, run_attempt bigint, event text, status text, conclusion text, head_branch text, head_sha text, actor_login text, html_url text, created_at timestamptz, updated_at timestamptz, run_started_at timestamptz, raw json",
	"branches":       "name text, commit_sha text, protected boolean, raw json",
	"tags":           "name text, commit_sha text, node_id text, zipball_url text, tarball_url text, raw json",
	"labels":         "id bigint, node_id text, name text, color text, description text, default boolean, raw json",
}

// Every table reads its typed columns and the object as sent in raw;
// listings are followed through the Link header (issues: three pages);
// the issues table leaves the pull request out; --schema lists the ten.
func TestTables(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	s := peer(t)
	src := open(t, ctx, srcURL(s))
	lister := src.(routes.TableLister)
	refs, err := lister.ListTables(ctx, "")
	if err != nil || len(refs) != 10 {
		t.Fatalf("ListTables: %v %v", refs, err)
	}
	want := map[string]struct {
		rows  int
		key   string
		check map[string]string // a column of the first row
	}{
		"issues":         {5, "id", map[string]string{"id": "5", "number": "5", "title": "issue 5", "user_login": "octo", "locked": "false", "updated_at": at(50), "closed_at": "NULL", "milestone_title": "NULL"}},
		"pull_requests":  {5, "id", map[string]string{"id": "105", "draft": "true", "head_ref": "feature", "merged_at": at(50), "body": "NULL"}},
		"issue_comments": {5, "id", map[string]string{"id": "205", "user_login": "octo", "updated_at": at(50)}},
		"commits":        {5, "sha", map[string]string{"sha": "sha5", "committed_at": at(50), "authored_at": at(49), "author_login": "octo", "committer_login": "NULL", "message": "msg sha5"}},
		"stargazers":     {1, "id", map[string]string{"id": "9", "login": "fan", "starred_at": at(1)}},
		"releases":       {1, "id", map[string]string{"id": "300", "tag_name": "v1", "prerelease": "true", "published_at": "NULL", "author_login": "octo"}},
		"workflow_runs":  {1, "id", map[string]string{"id": "400", "workflow_id": "41", "conclusion": "success", "actor_login": "octo"}},
		"branches":       {1, "name", map[string]string{"name": "main", "commit_sha": "abc", "protected": "true"}},
		"tags":           {1, "name", map[string]string{"name": "v1", "commit_sha": "abc"}},
		"labels":         {1, "name", map[string]string{"id": "500", "name": "bug", "default": "true", "description": "NULL"}},
	}
	for _, ref := range refs {
		info, err := src.Probe(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range info.Columns {
			names = append(names, c.Name+" "+c.NativeType)
		}
		if got := strings.Join(names, ", "); got != documented[ref.Name] {
			t.Errorf("%s has columns\n%s\nthe docs say\n%s", ref, got, documented[ref.Name])
		}
	}
	for _, ref := range refs {
		w, ok := want[ref.Name]
		if !ok {
			t.Fatalf("unexpected table %s", ref)
		}
		rows, info := read(t, ctx, src, ref.Name, routes.ReadOptions{})
		if len(rows) != w.rows || !slices.Equal(info.PrimaryKey, []string{w.key}) {
			t.Fatalf("%s: %d rows, key %v; want %d rows, key %s", ref, len(rows), info.PrimaryKey, w.rows, w.key)
		}
		for k, v := range w.check {
			if rows[0][k] != v {
				t.Errorf("%s.%s = %q, want %q", ref, k, rows[0][k], v)
			}
		}
		if c, _ := info.Column("raw"); c.NativeType != "json" {
			t.Errorf("%s.raw is %q", ref, c.NativeType)
		}
		var raw map[string]any
		if err := json.Unmarshal([]byte(rows[0]["raw"]), &raw); err != nil || len(raw) == 0 {
			t.Errorf("%s.raw = %q: %v", ref, rows[0]["raw"], err)
		}
	}
	issues, _ := read(t, ctx, src, "issues", routes.ReadOptions{})
	if !strings.Contains(issues[0]["raw"], `"extra_field":{"kept":true}`) {
		t.Errorf("raw is not the object as sent: %s", issues[0]["raw"])
	}
	for _, r := range issues {
		if r["id"] == "100" {
			t.Errorf("the issues table holds the pull request: %v", r)
		}
	}
	s.CreateRepo("acme/empty")
	if rows, _ := read(t, ctx, open(t, ctx, "github+api://acme/empty?endpoint="+s.URL), "commits", routes.ReadOptions{}); len(rows) != 0 {
		t.Errorf("commits of an empty repository: %v", rows)
	}
	if n := count(s.Requests(), "/issues?"); n < 3*2 || count(s.Requests(), "page=3") == 0 {
		t.Errorf("issues were not paged through three pages: %q", s.Requests())
	}
}

// An incremental read on updated_at sends since= (issues, comments) or
// the commit date (commits) and returns only the rows past the watermark;
// pull requests, which have no since=, stop paging at the watermark.
func TestSince(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	s := peer(t)
	for i := 6; i <= 12; i++ {
		s.Put(repo, "pulls", pull(100+i, i*10))
	}
	src := open(t, ctx, srcURL(s))
	after := base.Add(30 * time.Second).Format("2006-01-02 15:04:05.000000+00")
	for _, c := range []struct {
		table, cursor, since string
		want                 int
	}{
		{"issues", "updated_at", "/issues?", 2},
		{"issue_comments", "updated_at", "/issues/comments?", 2},
		{"commits", "committed_at", "/commits?", 2},
	} {
		before := len(s.Requests())
		rows, _ := read(t, ctx, src, c.table, routes.ReadOptions{Cursor: c.cursor, After: after})
		if len(rows) != c.want {
			t.Errorf("%s past %s: %d rows, want %d: %v", c.table, after, len(rows), c.want, rows)
		}
		reqs := s.Requests()[before:]
		if count(reqs, "since="+strings.ReplaceAll(at(30), ":", "%3A")) == 0 {
			t.Errorf("%s: no since= sent: %q", c.table, reqs)
		}
	}
	before := len(s.Requests())
	rows, _ := read(t, ctx, src, "pull_requests", routes.ReadOptions{Cursor: "updated_at", After: base.Add(90 * time.Second).Format(time.RFC3339), Until: base.Add(110 * time.Second).Format(time.RFC3339)})
	if len(rows) != 2 || rows[0]["id"] != "111" || rows[1]["id"] != "110" {
		t.Errorf("pull requests in (90s, 110s]: %v", rows)
	}
	if reqs := s.Requests()[before:]; len(reqs) != 2 {
		t.Errorf("pull requests did not stop paging at the watermark (12 rows, 2 a page): %q", reqs)
	}
	before = len(s.Requests())
	ms, ok, err := src.(routes.CursorSource).MaxCursor(ctx, &routes.TableInfo{Ref: routes.TableRef{Name: "pull_requests"}}, "updated_at")
	if err != nil || !ok || ms != base.Add(120*time.Second).Format("2006-01-02 15:04:05.000000+00") {
		t.Errorf("MaxCursor(pull_requests.updated_at) = %q %v %v", ms, ok, err)
	}
	if reqs := s.Requests()[before:]; len(reqs) != 1 {
		t.Errorf("the maximum of updated_at took %d requests: %q", len(reqs), reqs)
	}
	before = len(s.Requests())
	mc, ok, err := src.(routes.CursorSource).MaxCursor(ctx, &routes.TableInfo{Ref: routes.TableRef{Name: "commits"}}, "committed_at")
	if err != nil || !ok || mc != base.Add(50*time.Second).Format("2006-01-02 15:04:05.000000+00") {
		t.Errorf("MaxCursor(commits.committed_at) = %q %v %v", mc, ok, err)
	}
	if reqs := s.Requests()[before:]; len(reqs) != 3 {
		t.Errorf("the maximum of committed_at is not a scan of the three pages: %q", reqs)
	}
}

// logs captures slog's default logger for the test.
func logs(t *testing.T) func() string {
	var mu sync.Mutex
	var b bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(lockedWriter{&mu, &b}, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return func() string { mu.Lock(); defer mu.Unlock(); return b.String() }
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// A secondary rate limit (403, Retry-After: 1) and an exhausted primary
// one (X-RateLimit-Remaining: 0, reset a second ahead) are waited out, the
// waits said on the log, and the read completes.
func TestRateLimits(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	s := peer(t)
	src := open(t, ctx, srcURL(s))
	logged := logs(t)
	var n atomic.Int64
	s.Fault = func(r *http.Request) (int, http.Header, string, bool) {
		if !strings.HasSuffix(r.URL.Path, "/labels") {
			return 0, nil, "", false
		}
		switch n.Add(1) {
		case 1:
			return http.StatusForbidden, http.Header{"Retry-After": {"1"}},
				`{"message":"You have exceeded a secondary rate limit","documentation_url":"https://docs.example/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`, true
		case 2:
			return http.StatusForbidden, http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(time.Now().Add(time.Second).Unix(), 10)}},
				`{"message":"API rate limit exceeded"}`, true
		}
		return 0, nil, "", false
	}
	start := time.Now()
	rows, _ := read(t, ctx, src, "labels", routes.ReadOptions{})
	if len(rows) != 1 || n.Load() != 3 {
		t.Fatalf("%d rows after %d answers", len(rows), n.Load())
	}
	if el := time.Since(start); el < 1500*time.Millisecond {
		t.Errorf("the limits were not waited out: %v", el)
	}
	if l := logged(); strings.Count(l, "github rate limit: waiting") != 2 || !strings.Contains(l, "secondary rate limit") || !strings.Contains(l, "X-RateLimit-Reset") ||
		!strings.Contains(l, `request="labels of acme/widgets, page 1"`) {
		t.Errorf("the waits are not on the log:\n%s", l)
	}
	// an answer that spends the last request of the window holds the next
	// request until the reset
	s.Fault = nil
	var spent atomic.Bool
	s.Rate = func(r *http.Request) (int, time.Time) {
		if r.URL.Query().Get("page") == "1" && !spent.Swap(true) {
			return 0, time.Now().Add(time.Second)
		}
		return 4999, time.Now().Add(time.Hour)
	}
	start = time.Now()
	if rows, _ := read(t, ctx, src, "issues", routes.ReadOptions{}); len(rows) != 5 {
		t.Fatalf("issues after the window ran out: %d rows", len(rows))
	}
	if el := time.Since(start); el < 900*time.Millisecond || strings.Count(logged(), "github rate limit: waiting") != 3 {
		t.Errorf("page 2 did not wait for the reset (%v):\n%s", el, logged())
	}
	s.Rate = nil
	// a cancelled run ends a wait at once
	s.Fault = func(*http.Request) (int, http.Header, string, bool) {
		return http.StatusForbidden, http.Header{"Retry-After": {"60"}},
			`{"message":"You have exceeded a secondary rate limit","documentation_url":"https://docs.example/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`, true
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	info, _ := src.Probe(cctx, routes.TableRef{Name: "labels"})
	st, _ := src.Read(cctx, routes.Range{Table: info, Count: 1}, routes.ReadOptions{})
	start = time.Now()
	for st.Next() {
	}
	if err := st.Err(); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Errorf("a cancelled wait: %v after %v", err, time.Since(start))
	}
	st.Release()
}

// Bad input is exit 2 before a row moves, and the token never shows: an
// unknown repository (404), a refused token (401), an unknown table (the
// message lists the ten), an unknown parameter, a URL without a repository.
func TestBadInput(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	s := peer(t)
	s.Token = "good-token"
	const wrong = "wrong-token-123"
	for _, c := range []struct{ name, url, want string }{
		{"unknown repo", "github+api://acme/nope?token=good-token&endpoint=" + s.URL, "acme/nope does not exist"},
		{"refused token", "github+api://" + repo + "?token=" + wrong + "&endpoint=" + s.URL, "refused the token (401"},
		{"unknown parameter", "github+api://" + repo + "?ref=main&endpoint=" + s.URL, `unknown parameter "ref"`},
		{"no repo", "github+api://acme?endpoint=" + s.URL, "want github+api://OWNER/REPO"},
	} {
		_, err := routes.OpenSource(ctx, c.url)
		if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want bad input with %q", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), wrong) {
			t.Errorf("%s: the token is printed: %v", c.name, err)
		}
	}
	if r := routes.Redact("github+api://" + repo + "?token=" + wrong); strings.Contains(r, wrong) {
		t.Errorf("Redact shows the token: %s", r)
	}
	t.Setenv("GITHUB_TOKEN", "good-token")
	src := open(t, ctx, "github+api://"+repo+"?endpoint="+s.URL)
	_, err := src.Probe(ctx, routes.TableRef{Name: "wikis"})
	var pe *routes.ProbeError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "issues, pull_requests, issue_comments, commits, stargazers, releases, workflow_runs, branches, tags, labels") {
		t.Errorf("unknown table: %v", err)
	}
	if rows, _ := read(t, ctx, src, "labels", routes.ReadOptions{}); len(rows) != 1 {
		t.Errorf("GITHUB_TOKEN is not used: %v", rows)
	}
}

// Through PostgreSQL: append on updated_at moves only the issues updated
// after the watermark the destination keeps (since= on the server), and
// merge on the id takes an edited issue in place.
func TestIncremental_Postgres(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	s := peer(t)
	pg := postgrestest.New(t)
	dest := pg.Ref("gh_issues")
	spec := func(mode routes.Mode) routes.CopySpec {
		dt, _ := routes.ParseTableRef(dest)
		return routes.CopySpec{Table: routes.TableRef{Name: "issues"}, DestTable: dt, Mode: mode, Budget: routes.Budget{Parallel: 1, ChunkBytes: 1 << 20}}
	}
	copyOnce := func(mode routes.Mode) routes.CopyResult {
		t.Helper()
		res, err := incremental.CopyURLs(ctx, srcURL(s), pg.URL(), spec(mode), "updated_at")
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		return res
	}
	titles := func() map[int64]string {
		rows, err := pg.Pool.Query(ctx, "SELECT id, title FROM "+dest)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int64]string{}
		for rows.Next() {
			var id int64
			var title string
			rows.Scan(&id, &title)
			out[id] = title
		}
		return out
	}
	if res := copyOnce(routes.ModeReplace); res.Rows != 5 {
		t.Fatalf("replace: %+v", res)
	}
	copyOnce(routes.ModeAppend) // takes the watermark from the replaced rows
	s.Put(repo, "issues", issue(6, 60, "issue 6"), issue(7, 70, "issue 7"))
	before := len(s.Requests())
	if res := copyOnce(routes.ModeAppend); res.Rows != 2 {
		t.Fatalf("append after two new issues moved %d rows", res.Rows)
	}
	if count(s.Requests()[before:], "since=") == 0 {
		t.Errorf("append did not send since=: %q", s.Requests()[before:])
	}
	if got := titles(); len(got) != 7 || got[7] != "issue 7" {
		t.Fatalf("after append: %v", got)
	}
	s.Put(repo, "issues", issue(3, 80, "issue 3, edited"))
	if res := copyOnce(routes.ModeMerge); res.Rows != 1 {
		t.Fatalf("merge after one edit moved %d rows", res.Rows)
	}
	if got := titles(); len(got) != 7 || got[3] != "issue 3, edited" {
		t.Fatalf("after merge: %v", got)
	}
	var wm string
	pg.Pool.QueryRow(ctx, "SELECT watermark FROM "+pg.Schema+"._weir_state WHERE source LIKE '%#issues'").Scan(&wm)
	if !strings.HasPrefix(wm, base.Add(80*time.Second).Format("2006-01-02 15:04:05")) {
		t.Errorf("the destination keeps watermark %q", wm)
	}
	_ = githubapi.Scheme
}

// Rows stream a page at a time: while the consumer holds the first batch
// the peer has served at most the next page, not the repository.
func TestStreamsPageByPage(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	s := githubapitest.NewServer(t)
	s.CreateRepo(repo)
	for i := 1; i <= 1000; i++ {
		s.Put(repo, "issues", issue(i, i, "issue"))
	}
	src := open(t, ctx, srcURL(s))
	info, _ := src.Probe(ctx, routes.TableRef{Name: "issues"})
	st, err := src.Read(ctx, routes.Range{Table: info, Count: 1}, routes.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Release()
	if !st.Next() || st.RecordBatch().NumRows() != 100 {
		t.Fatalf("first batch: %v", st.Err())
	}
	time.Sleep(200 * time.Millisecond)
	if n := count(s.Requests(), "/issues?"); n > 2 {
		t.Fatalf("%d pages fetched while the first batch is held", n)
	}
	rows := int64(100)
	for st.Next() {
		rows += st.RecordBatch().NumRows()
	}
	if rows != 1000 || st.Err() != nil || count(s.Requests(), "/issues?") != 10 {
		t.Fatalf("%d rows in %d pages: %v", rows, count(s.Requests(), "/issues?"), st.Err())
	}
}

// An issue updated while the listing pages moves to its front (newest
// first) and shifts the rest back by one: the row that shows again on the
// next page is read once, and the next incremental read takes the edit.
func TestUpdatedWhilePaging(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	s := githubapitest.NewServer(t)
	s.PageSize = 2
	s.CreateRepo(repo)
	for i := 1; i <= 5; i++ {
		s.Put(repo, "issues", issue(i, i*10, "issue"))
	}
	var once sync.Once
	s.Fault = func(r *http.Request) (int, http.Header, string, bool) {
		if r.URL.Query().Get("page") == "2" {
			once.Do(func() { s.Put(repo, "issues", issue(1, 99, "edited")) })
		}
		return 0, nil, "", false
	}
	src := open(t, ctx, srcURL(s))
	rows, _ := read(t, ctx, src, "issues", routes.ReadOptions{})
	var ids []string
	for _, r := range rows {
		ids = append(ids, r["id"])
	}
	if !slices.Equal(ids, []string{"5", "4", "3", "2"}) {
		t.Fatalf("ids read: %v", ids)
	}
	// the edit is newer than every row read, so the next run past them takes it
	next, _ := read(t, ctx, src, "issues", routes.ReadOptions{Cursor: "updated_at", After: base.Add(50 * time.Second).Format("2006-01-02 15:04:05.000000+00")})
	if len(next) != 1 || next[0]["id"] != "1" || next[0]["title"] != "edited" {
		t.Fatalf("the next incremental read: %v", next)
	}
}

// A read cancelled after 0, 1 or 3 batches ends with the context's error
// and frees every buffer it allocated.
func TestCancelledRead(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	s := githubapitest.NewServer(t)
	s.CreateRepo(repo)
	for i := 1; i <= 1000; i++ {
		s.Put(repo, "issues", issue(i, i, "issue"))
	}
	src := open(t, ctx, srcURL(s))
	info, _ := src.Probe(ctx, routes.TableRef{Name: "issues"})
	for _, after := range []int{0, 1, 3} {
		t.Run(strconv.Itoa(after), func(t *testing.T) {
			mem := routestest.CheckedAllocator(t)
			rctx, cancel := context.WithCancel(ctx)
			defer cancel()
			st, err := src.Read(rctx, routes.Range{Table: info, Count: 1}, routes.ReadOptions{Allocator: mem})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < after; i++ {
				if !st.Next() {
					t.Fatalf("ended after %d batches: %v", i, st.Err())
				}
			}
			cancel()
			for st.Next() {
			}
			err = st.Err()
			st.Release()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("after a cancel: %v", err)
			}
		})
	}
}
