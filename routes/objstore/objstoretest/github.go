package objstoretest

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/routestest"
)

// GitHub is an in-process peer of the parts of GitHub's REST API that
// github:// reads, as documented: GET /repos/{owner}/{repo} (the default
// branch), /commits/{ref} with the SHA media type (a branch, tag or SHA to
// its commit; 422 for none), /git/trees/{sha}[?recursive=1] and
// /git/blobs/{sha} (raw media type or base64 JSON, with the blob SHA as
// ETag and 304 for If-None-Match). It checks a bearer token when Token is
// set (401 Bad credentials otherwise), hides a private repository from a
// request without one (404), and sends the X-RateLimit-* headers. Fault
// answers a request instead, to play rate limits and server errors.
type GitHub struct {
	URL   string
	Token string // "": no token needed

	mu    sync.Mutex
	repos map[string]*fakeRepo
	// Fault, when set, may answer a request itself (ok true): a rate
	// limit, a server error.
	Fault func(r *http.Request) (status int, header http.Header, body string, ok bool)
	reads map[string]int // blob SHA → raw reads
	calls int
}

type fakeRepo struct {
	private  bool
	branch   string            // default branch
	refs     map[string]string // branch or tag → commit
	commits  map[string]string // commit → root tree
	trees    map[string][]treeEntry
	blobs    map[string][]byte
	sequence int
}

type treeEntry struct {
	Path string `json:"path"`
	Mode string `json:"mode"`
	Type string `json:"type"`
	SHA  string `json:"sha"`
	Size int    `json:"size,omitempty"`
}

// NewGitHubServer starts the peer for the test.
func NewGitHubServer(t testing.TB) *GitHub {
	g := &GitHub{repos: map[string]*fakeRepo{}, reads: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(srv.Close)
	g.URL = srv.URL
	return g
}

// CreateRepo makes an empty repository whose default branch is main.
func (g *GitHub) CreateRepo(fullName string, private bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.repos[fullName] = &fakeRepo{private: private, branch: "main", refs: map[string]string{}, commits: map[string]string{},
		trees: map[string][]treeEntry{}, blobs: map[string][]byte{}}
}

// Commit makes a commit on branch holding exactly files (path → content)
// and returns its SHA.
func (g *GitHub) Commit(fullName, branch string, files map[string][]byte) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.repos[fullName]
	root := r.writeTree(files, "")
	r.sequence++
	sha := hashOf("commit", fmt.Sprintf("%s %s %d", root, r.refs[branch], r.sequence))
	r.commits[sha] = root
	r.refs[branch] = sha
	return sha
}

// Tag points tag at commit.
func (g *GitHub) Tag(fullName, tag, commit string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.repos[fullName].refs[tag] = commit
}

// BlobReads is how many times a file's content was read (raw or JSON).
func (g *GitHub) BlobReads(content []byte) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reads[hashOf("blob", string(content))]
}

// Calls is how many requests the peer answered.
func (g *GitHub) Calls() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls
}

// writeTree stores the tree of files under dir and returns its SHA.
func (r *fakeRepo) writeTree(files map[string][]byte, dir string) string {
	var entries []treeEntry
	subdirs := map[string]bool{}
	for p, content := range files {
		rel, ok := strings.CutPrefix(p, dir)
		if !ok {
			continue
		}
		if first, _, nested := strings.Cut(rel, "/"); nested {
			subdirs[first] = true
			continue
		}
		sha := hashOf("blob", string(content))
		r.blobs[sha] = content
		entries = append(entries, treeEntry{Path: rel, Mode: "100644", Type: "blob", SHA: sha, Size: len(content)})
	}
	for d := range subdirs {
		entries = append(entries, treeEntry{Path: d, Mode: "040000", Type: "tree", SHA: r.writeTree(files, dir+d+"/")})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	b, _ := json.Marshal(entries)
	sha := hashOf("tree", string(b))
	r.trees[sha] = entries
	return sha
}

// hashOf is git's object hash: sha1 of "<kind> <len>\x00<content>".
func hashOf(kind, content string) string {
	h := sha1.Sum([]byte(kind + " " + strconv.Itoa(len(content)) + "\x00" + content))
	return hex.EncodeToString(h[:])
}

func (g *GitHub) serve(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls++
	w.Header().Set("X-RateLimit-Limit", "5000")
	w.Header().Set("X-RateLimit-Remaining", "4999")
	w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
	if g.Fault != nil {
		if code, h, body, ok := g.Fault(r); ok {
			for k, v := range h {
				w.Header()[k] = v
			}
			writeJSON(w, code, body)
			return
		}
	}
	auth := r.Header.Get("Authorization")
	if auth != "" && (g.Token == "" || auth != "Bearer "+g.Token) {
		writeJSON(w, http.StatusUnauthorized, `{"message":"Bad credentials","documentation_url":"https://docs.example/rest"}`)
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(parts) < 3 || parts[0] != "repos" {
		writeJSON(w, http.StatusNotFound, `{"message":"Not Found"}`)
		return
	}
	repo, ok := g.repos[parts[1]+"/"+parts[2]]
	if !ok || repo.private && auth == "" {
		writeJSON(w, http.StatusNotFound, `{"message":"Not Found"}`)
		return
	}
	rest := parts[3:]
	switch {
	case len(rest) == 0:
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"full_name":%q,"default_branch":%q,"private":%t}`, parts[1]+"/"+parts[2], repo.branch, repo.private))
	case len(rest) >= 2 && rest[0] == "commits":
		g.serveCommit(w, r, repo, strings.Join(rest[1:], "/"))
	case len(rest) == 3 && rest[0] == "git" && rest[1] == "trees":
		g.serveTree(w, r, repo, rest[2])
	case len(rest) == 3 && rest[0] == "git" && rest[1] == "blobs":
		g.serveBlob(w, r, repo, rest[2])
	default:
		writeJSON(w, http.StatusNotFound, `{"message":"Not Found"}`)
	}
}

func (g *GitHub) serveCommit(w http.ResponseWriter, r *http.Request, repo *fakeRepo, ref string) {
	sha, ok := repo.refs[ref]
	if !ok {
		if _, isCommit := repo.commits[ref]; isCommit {
			sha, ok = ref, true
		}
	}
	if !ok {
		writeJSON(w, http.StatusUnprocessableEntity, fmt.Sprintf(`{"message":"No commit found for SHA: %s"}`, ref))
		return
	}
	if r.Header.Get("If-None-Match") == `"`+sha+`"` {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if r.Header.Get("Accept") != "application/vnd.github.v3.sha" {
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"sha":%q}`, sha))
		return
	}
	w.Header().Set("ETag", `"`+sha+`"`)
	w.Write([]byte(sha))
}

func (g *GitHub) serveTree(w http.ResponseWriter, r *http.Request, repo *fakeRepo, sha string) {
	if root, ok := repo.commits[sha]; ok {
		sha = root // a commit SHA names its root tree
	}
	entries, ok := repo.trees[sha]
	if !ok {
		writeJSON(w, http.StatusNotFound, `{"message":"Not Found"}`)
		return
	}
	if r.URL.Query().Get("recursive") != "" {
		entries = repo.flatten(entries, "")
	}
	b, _ := json.Marshal(map[string]any{"sha": sha, "tree": entries, "truncated": false})
	writeJSON(w, http.StatusOK, string(b))
}

func (r *fakeRepo) flatten(entries []treeEntry, dir string) []treeEntry {
	var out []treeEntry
	for _, e := range entries {
		e.Path = dir + e.Path
		out = append(out, e)
		if e.Type == "tree" {
			out = append(out, r.flatten(r.trees[e.SHA], e.Path+"/")...)
		}
	}
	return out
}

func (g *GitHub) serveBlob(w http.ResponseWriter, r *http.Request, repo *fakeRepo, sha string) {
	content, ok := repo.blobs[sha]
	if !ok {
		writeJSON(w, http.StatusNotFound, `{"message":"Not Found"}`)
		return
	}
	etag := `"` + sha + `"`
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	g.reads[sha]++
	w.Header().Set("ETag", etag)
	if strings.HasPrefix(r.Header.Get("Accept"), "application/vnd.github.raw") {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(content)))
		w.Write(content)
		return
	}
	b, _ := json.Marshal(map[string]any{"sha": sha, "size": len(content), "encoding": "base64", "content": base64.StdEncoding.EncodeToString(content)})
	writeJSON(w, http.StatusOK, string(b))
}

func writeJSON(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	w.Write([]byte(body))
}

// GitHubFixture is the routes matrix's github:// source: tables are weir
// tables written as CSV (the file route, format=csv: a manifest holding
// the schema, and .csv files) under data/ of a repository on the GitHub
// peer, each Create and Insert one commit on main.
type GitHubFixture struct {
	Server *GitHub
	files  *Fixture
	repo   string
}

var _ routestest.SourceFixture = (*GitHubFixture)(nil)

// NewGitHub starts the GitHub peer with an empty repository.
func NewGitHub(t testing.TB) *GitHubFixture {
	g := NewGitHubServer(t)
	repo := "weir/" + routestest.Name("repo")
	g.CreateRepo(repo, false)
	f := &GitHubFixture{Server: g, files: NewFile(t, "format=csv"), repo: repo}
	f.push(t)
	return f
}

// URL is the repository's data/ folder on main.
func (f *GitHubFixture) URL() string {
	return "github://" + f.repo + "/data?ref=main&endpoint=" + f.Server.URL
}

// Ref returns the table name (a folder under data/).
func (f *GitHubFixture) Ref(name string) string { return name }

// Create writes table name and commits it.
func (f *GitHubFixture) Create(t testing.TB, ctx context.Context, name string, rows []routestest.Row) {
	f.files.Create(t, ctx, name, rows)
	f.push(t)
}

// Insert appends rows to table name and commits them.
func (f *GitHubFixture) Insert(t testing.TB, ctx context.Context, name string, rows []routestest.Row) {
	f.files.Insert(t, ctx, name, rows)
	f.push(t)
}

// CreateKeyless writes a keyless table and commits it.
func (f *GitHubFixture) CreateKeyless(t testing.TB, ctx context.Context, name string, ids []*int64) {
	f.files.CreateKeyless(t, ctx, name, ids)
	f.push(t)
}

// Read fails: github:// is a source only.
func (f *GitHubFixture) Read(t testing.TB, _ context.Context, name string) ([]routestest.Row, bool) {
	t.Fatalf("github:// is a source only: nothing reads %s back from it", name)
	return nil, false
}

// Staging is empty: github:// stages nothing.
func (f *GitHubFixture) Staging(testing.TB, context.Context, string) []string { return nil }

// push commits the file fixture's directory as data/ on main.
func (f *GitHubFixture) push(t testing.TB) {
	t.Helper()
	files := map[string][]byte{"data/README.md": []byte("tables written by weir\n")}
	err := filepath.WalkDir(f.files.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(f.files.root, p)
		files[path.Join("data", filepath.ToSlash(rel))] = b
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", f.files.root, err)
	}
	f.Server.Commit(f.repo, "main", files)
}
