// Package githubapitest is an in-process peer of the GitHub REST API
// listings github+api:// reads, and the routes matrix's fixture on it.
package githubapitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server speaks, as GitHub documents them: GET /repos/{owner}/{repo} and
// its listings issues (pull requests included, with a pull_request field),
// stargazers (with starred_at only under the star media type),
// pulls, issues/comments, commits, stargazers, releases, actions/runs
// (inside {"total_count","workflow_runs"}), branches, tags and labels;
// since= on issues and comments (updated_at) and commits (the committer
// date), sort=updated with direction, per_page (at most PageSize) and
// page with a Link header (rel="next", rel="last"). It checks a bearer
// token when Token is set (401 Bad credentials), answers 409 for the
// commits of an empty repository (as GitHub does), 404 for an
// unknown repository, and sends the X-RateLimit-* headers. Fault may
// answer a request instead (rate limits).
type Server struct {
	URL      string
	Token    string // "": no token needed
	PageSize int    // the most objects a page holds (GitHub: 100)

	mu    sync.Mutex
	repos map[string]map[string][]map[string]any // owner/repo → listing → objects
	Fault func(r *http.Request) (status int, header http.Header, body string, ok bool)
	// Rate, when set, gives the X-RateLimit-Remaining and -Reset an answer
	// sends (else 4999, an hour ahead).
	Rate func(r *http.Request) (remaining int, reset time.Time)
	log  []string // the request URIs, in order
}

// NewServer starts the peer for the test.
func NewServer(t testing.TB) *Server {
	s := &Server{repos: map[string]map[string][]map[string]any{}, PageSize: 100}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Listings are the listing paths the peer serves below a repository.
var Listings = []string{"issues", "pulls", "issues/comments", "commits", "stargazers", "releases", "actions/runs", "branches", "tags", "labels"}

// CreateRepo makes an empty repository.
func (s *Server) CreateRepo(fullName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[fullName] = map[string][]map[string]any{}
}

// Put adds objects to a listing of a repository, or replaces the one with
// the same id (name for branches, tags, labels; sha for commits).
func (s *Server) Put(fullName, listing string, objs ...map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	repo := s.repos[fullName]
	for _, o := range objs {
		k := identity(o)
		replaced := false
		for i, old := range repo[listing] {
			if identity(old) == k {
				repo[listing][i], replaced = o, true
			}
		}
		if !replaced {
			repo[listing] = append(repo[listing], o)
		}
	}
}

func identity(o map[string]any) string {
	for _, k := range []string{"id", "sha", "name"} {
		if v, ok := o[k]; ok {
			return k + "=" + fmt.Sprint(v)
		}
	}
	if u, ok := o["user"].(map[string]any); ok {
		return "user=" + fmt.Sprint(u["id"])
	}
	return fmt.Sprint(o)
}

// Requests returns the request URIs served so far (path and query).
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.log = append(s.log, r.URL.RequestURI())
	fault, rate := s.Fault, s.Rate
	s.mu.Unlock()
	h := w.Header()
	remaining, reset := 4999, time.Now().Add(time.Hour)
	if rate != nil {
		remaining, reset = rate(r)
	}
	h.Set("X-RateLimit-Limit", "5000")
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	if fault != nil {
		if code, fh, body, ok := fault(r); ok {
			for k, v := range fh {
				h[k] = v
			}
			writeJSON(w, code, body)
			return
		}
	}
	if s.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.Token {
		writeJSON(w, http.StatusUnauthorized, `{"message":"Bad credentials","documentation_url":"https://docs.example/rest"}`)
		return
	}
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/repos/"), "/", 3)
	if !strings.HasPrefix(r.URL.Path, "/repos/") || len(parts) < 2 {
		writeJSON(w, http.StatusNotFound, `{"message":"Not Found"}`)
		return
	}
	full := parts[0] + "/" + parts[1]
	s.mu.Lock()
	repo, ok := s.repos[full]
	var objs []map[string]any
	listing := ""
	if len(parts) == 3 {
		listing = parts[2]
		objs = append(objs, repo[listing]...)
	}
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, `{"message":"Not Found"}`)
		return
	}
	if listing == "" {
		b, _ := json.Marshal(map[string]any{"id": 1, "full_name": full, "default_branch": "main", "private": false})
		writeJSON(w, http.StatusOK, string(b))
		return
	}
	known := false
	for _, l := range Listings {
		known = known || l == listing
	}
	if !known {
		writeJSON(w, http.StatusNotFound, `{"message":"Not Found"}`)
		return
	}
	if listing == "commits" && len(objs) == 0 {
		writeJSON(w, http.StatusConflict, `{"message":"Git Repository is empty."}`)
		return
	}
	q := r.URL.Query()
	objs = filterSince(listing, objs, q.Get("since"))
	sortListing(listing, objs, q)
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	size, _ := strconv.Atoi(q.Get("per_page"))
	if size <= 0 {
		size = 30
	}
	size = min(size, s.PageSize)
	last := max((len(objs)+size-1)/size, 1)
	lo, hi := min((page-1)*size, len(objs)), min(page*size, len(objs))
	if page < last {
		h.Set("Link", fmt.Sprintf(`<%s>; rel="next", <%s>; rel="last"`, s.pageURL(r, page+1), s.pageURL(r, last)))
	}
	var body any = objs[lo:hi]
	if listing == "stargazers" && !strings.Contains(r.Header.Get("Accept"), "star+json") {
		var users []any // without the star media type: the users, no starred_at
		for _, o := range objs[lo:hi] {
			users = append(users, o["user"])
		}
		body = users
	}
	if listing == "actions/runs" {
		body = map[string]any{"total_count": len(objs), "workflow_runs": objs[lo:hi]}
	}
	b, _ := json.Marshal(body)
	writeJSON(w, http.StatusOK, string(b))
}

func (s *Server) pageURL(r *http.Request, page int) string {
	q := r.URL.Query()
	q.Set("page", strconv.Itoa(page))
	return s.URL + r.URL.Path + "?" + q.Encode()
}

// filterSince keeps the objects updated at or after since (issues and
// comments: updated_at; commits: the committer date).
func filterSince(listing string, objs []map[string]any, since string) []map[string]any {
	if since == "" {
		return objs
	}
	t, err := time.Parse(time.RFC3339, since)
	if err != nil {
		return objs
	}
	var out []map[string]any
	for _, o := range objs {
		var ts string
		switch listing {
		case "issues", "issues/comments":
			ts, _ = o["updated_at"].(string)
		case "commits":
			ts = commitDate(o)
		default:
			return objs // no since= on this listing: GitHub ignores it
		}
		if v, err := time.Parse(time.RFC3339, ts); err == nil && !v.Before(t) {
			out = append(out, o)
		}
	}
	return out
}

func commitDate(o map[string]any) string {
	c, _ := o["commit"].(map[string]any)
	cm, _ := c["committer"].(map[string]any)
	d, _ := cm["date"].(string)
	return d
}

// sortListing orders a listing: by updated_at (sort=updated, direction
// asc or desc; the default for issues, pulls and comments is created
// order), commits newest first, others as stored.
func sortListing(listing string, objs []map[string]any, q map[string][]string) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	switch {
	case listing == "commits":
		sort.SliceStable(objs, func(i, j int) bool { return commitDate(objs[i]) > commitDate(objs[j]) })
	case get("sort") == "updated":
		desc := get("direction") != "asc"
		sort.SliceStable(objs, func(i, j int) bool {
			a, _ := objs[i]["updated_at"].(string)
			b, _ := objs[j]["updated_at"].(string)
			if desc {
				return a > b
			}
			return a < b
		})
	}
}

func writeJSON(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	w.Write([]byte(body))
}
