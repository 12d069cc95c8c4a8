package objstore

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/google/go-github/v75/github"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/githubclient"
)

// SchemeGitHub reads the CSV files of a GitHub repository at one commit:
// github://OWNER/REPO[/PATH]?ref=BRANCH|TAG|SHA. It is a source only.
const SchemeGitHub = "github"

// githubParams are github://'s query parameters: ref (default: the
// repository's default branch), token (else GITHUB_TOKEN), endpoint (the
// REST API's base URL, for GitHub Enterprise Server or a test peer).
var githubParams = []string{"ref", "token", "endpoint"}

// maxTreeEntries is where the trees API truncates a recursive listing.
const maxTreeEntries = 100_000

func init() {
	routes.RegisterScheme(routes.SchemeInfo{Name: SchemeGitHub, Source: true}, openGitHub)
}

// githubStore is a read-only store over the files under PATH of one
// commit: the ref is resolved to a commit SHA when the URL opens, and the
// tree of that commit is listed once, so every read of the run sees the
// same files however the branch moves meanwhile. File contents are read
// as raw blobs, streamed.
type githubStore struct {
	api          *githubclient.Client
	owner, repo  string
	prefix       string // PATH inside the repository, no slashes around it
	ref, sha     string // as given (or the default branch) and resolved
	files        map[string]githubFile
	keys         []string // of files, sorted
	identityBase string
}

// githubFile is one blob of the listed tree.
type githubFile struct {
	sha  string
	size int64
}

var _ store = (*githubStore)(nil)

func openGitHub(ctx context.Context, u *routes.URL) (routes.Endpoint, error) {
	st, err := newGitHubStore(ctx, u)
	if err != nil {
		return nil, err
	}
	return &GitHub{ep: &Endpoint{url: u, store: st, set: settings{format: "csv"}}, st: st}, nil
}

func newGitHubStore(ctx context.Context, u *routes.URL) (*githubStore, error) {
	q := u.URL().Query()
	for k := range q {
		if !slices.Contains(githubParams, k) {
			return nil, routes.BadInput("%s: unknown parameter %q (known: %s)", u, k, strings.Join(githubParams, ", "))
		}
	}
	owner := u.URL().Host
	parts := strings.SplitN(strings.Trim(u.URL().Path, "/"), "/", 2)
	if owner == "" || parts[0] == "" {
		return nil, routes.BadInput("%s: want github://OWNER/REPO[/PATH]?ref=BRANCH|TAG|SHA", u)
	}
	api, err := githubclient.New(q.Get("endpoint"), q.Get("token"))
	if err != nil {
		return nil, routes.BadInput("%s: endpoint: %v", u, err)
	}
	s := &githubStore{api: api, owner: owner, repo: parts[0], ref: q.Get("ref")}
	if len(parts) == 2 {
		s.prefix = strings.Trim(parts[1], "/")
	}
	s.identityBase = "github://" + owner + "/" + s.repo
	if err := s.resolve(ctx); err != nil {
		return nil, err
	}
	if err := s.list(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// resolve checks the repository (and the credentials) and pins the ref to
// its commit SHA.
func (s *githubStore) resolve(ctx context.Context) error {
	var repo *github.Repository
	err := s.api.Call(ctx, "repository "+s.owner+"/"+s.repo, func(c *github.Client) (*github.Response, error) {
		r, resp, err := c.Repositories.Get(ctx, s.owner, s.repo)
		repo = r
		return resp, err
	})
	switch githubclient.Status(err) {
	case 0:
	case http.StatusNotFound:
		return routes.BadInput("github repository %s/%s does not exist, or the token cannot see it (a private repository needs GITHUB_TOKEN or ?token=)", s.owner, s.repo)
	default:
		return githubclient.Refused(err, "read repository "+s.owner+"/"+s.repo, errContentsRead)
	}
	if s.ref == "" {
		s.ref = repo.GetDefaultBranch()
	}
	err = s.api.Call(ctx, "ref "+s.ref, func(c *github.Client) (*github.Response, error) {
		sha, resp, err := c.Repositories.GetCommitSHA1(ctx, s.owner, s.repo, s.ref, "")
		s.sha = sha
		return resp, err
	})
	switch githubclient.Status(err) {
	case 0:
		return nil
	case http.StatusNotFound, http.StatusUnprocessableEntity:
		return routes.BadInput("github repository %s/%s has no branch, tag or commit %q (ref=)", s.owner, s.repo, s.ref)
	}
	return githubclient.Refused(err, "resolve ref "+s.ref, errContentsRead)
}

// list reads the tree under prefix at the commit: walking down to PATH one
// folder at a time, then one recursive listing of it.
func (s *githubStore) list(ctx context.Context) error {
	treeSHA := s.sha
	walked := ""
	if s.prefix != "" {
		for _, part := range strings.Split(s.prefix, "/") {
			tree, err := s.tree(ctx, treeSHA, false)
			if err != nil {
				return err
			}
			next := ""
			for _, e := range tree.Entries {
				if e.GetPath() == part && e.GetType() == "tree" {
					next = e.GetSHA()
				}
			}
			walked = path.Join(walked, part)
			if next == "" {
				return routes.BadInput("github repository %s/%s has no folder %s at %s (%s)", s.owner, s.repo, walked, s.ref, short(s.sha))
			}
			treeSHA = next
		}
	}
	tree, err := s.tree(ctx, treeSHA, true)
	if err != nil {
		return err
	}
	if tree.GetTruncated() {
		return routes.BadInput("github://%s/%s/%s holds more than %d files, more than one listing returns: name a deeper PATH", s.owner, s.repo, s.prefix, maxTreeEntries)
	}
	s.files = map[string]githubFile{}
	for _, e := range tree.Entries {
		if e.GetType() != "blob" {
			continue
		}
		s.files[e.GetPath()] = githubFile{sha: e.GetSHA(), size: int64(e.GetSize())}
		s.keys = append(s.keys, e.GetPath())
	}
	sort.Strings(s.keys)
	return nil
}

func (s *githubStore) tree(ctx context.Context, sha string, recursive bool) (*github.Tree, error) {
	var tree *github.Tree
	err := s.api.Call(ctx, "tree "+sha, func(c *github.Client) (*github.Response, error) {
		t, resp, err := c.Git.GetTree(ctx, s.owner, s.repo, sha, recursive)
		tree = t
		return resp, err
	})
	if err != nil {
		return nil, githubclient.Refused(err, "list the tree of "+s.owner+"/"+s.repo, errContentsRead)
	}
	return tree, nil
}

// errReadOnly: github:// is a source.
var errReadOnly = fmt.Errorf("%w: github:// is a source only; write to file://, s3://, gcs:// or a database", routes.ErrUnsupported)

func (s *githubStore) Create(context.Context, string) (objectWriter, error) { return nil, errReadOnly }
func (s *githubStore) Put(context.Context, string, []byte, cond) (string, error) {
	return "", errReadOnly
}
func (s *githubStore) Move(context.Context, string, string) error { return errReadOnly }
func (s *githubStore) Delete(context.Context, string) error       { return errReadOnly }
func (s *githubStore) Close() error                               { return nil }

// Describe names a file of the repository at the pinned commit.
func (s *githubStore) Describe(key string) string {
	return "github://" + path.Join(s.owner, s.repo, s.prefix, key) + "@" + short(s.sha)
}

func short(sha string) string { return sha[:min(len(sha), 12)] }

// Get reads a small file whole; its version is its blob SHA.
func (s *githubStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	f, ok := s.files[key]
	if !ok {
		return nil, "", errNotExist
	}
	rc, err := s.blob(ctx, key, f)
	if err != nil {
		return nil, "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return b, f.sha, err
}

// Open finds a file and its size; github:// streams files (CSV), and
// refuses random access (Parquet footers).
func (s *githubStore) Open(_ context.Context, key string) (blob, error) {
	f, ok := s.files[key]
	if !ok {
		return nil, errNotExist
	}
	return sizedBlob(f.size), nil
}

type sizedBlob int64

func (b sizedBlob) Size() int64  { return int64(b) }
func (b sizedBlob) Close() error { return nil }
func (b sizedBlob) ReadAt([]byte, int64) (int, error) {
	return 0, fmt.Errorf("%w: github:// reads .csv and .csv.gz files (and weir tables written as csv or csv.gz), not Parquet", routes.ErrUnsupported)
}

// Stream reads a file's raw blob as the response body arrives.
func (s *githubStore) Stream(ctx context.Context, key string) (io.ReadCloser, error) {
	f, ok := s.files[key]
	if !ok {
		return nil, errNotExist
	}
	return s.blob(ctx, key, f)
}

func (s *githubStore) blob(ctx context.Context, key string, f githubFile) (io.ReadCloser, error) {
	var body io.ReadCloser
	err := s.api.Call(ctx, "blob "+key, func(c *github.Client) (*github.Response, error) {
		req, err := c.NewRequest(http.MethodGet, fmt.Sprintf("repos/%s/%s/git/blobs/%s", url.PathEscape(s.owner), url.PathEscape(s.repo), f.sha), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/vnd.github.raw+json")
		resp, err := c.BareDo(ctx, req)
		if err == nil {
			body = resp.Body
		}
		return resp, err
	})
	if err != nil {
		return nil, githubclient.Refused(err, "read "+s.Describe(key), errContentsRead)
	}
	return body, nil
}

// List returns the files under prefix (relative to PATH), sorted.
func (s *githubStore) List(_ context.Context, prefix string) ([]object, error) {
	var out []object
	for _, k := range s.keys {
		if prefix == "" || strings.HasPrefix(k, prefix+"/") {
			out = append(out, object{Key: k, Size: s.files[k].size})
		}
	}
	return out, nil
}

// GitHub is the github:// source: the object-store source (its CSV reader,
// type inference and cursor reads) over the files of one commit, with
// table names by file stem, --schema listing, and the content version
// that makes an unchanged replace a no-op.
type GitHub struct {
	ep *Endpoint // not embedded: its Prepare would make github:// a destination
	st *githubStore
}

var (
	_ routes.Source          = (*GitHub)(nil)
	_ routes.CursorSource    = (*GitHub)(nil)
	_ routes.TableLister     = (*GitHub)(nil)
	_ routes.VersionedSource = (*GitHub)(nil)
)

// Close releases the client.
func (g *GitHub) Close() error { return g.ep.Close() }

// Plan makes one range per file.
func (g *GitHub) Plan(ctx context.Context, info *routes.TableInfo, opts routes.PlanOptions) ([]routes.Range, error) {
	return g.ep.Plan(ctx, info, opts)
}

// Read streams one file.
func (g *GitHub) Read(ctx context.Context, r routes.Range, opts routes.ReadOptions) (routes.Stream, error) {
	return g.ep.Read(ctx, r, opts)
}

// MaxCursor reads the files for the cursor's highest value.
func (g *GitHub) MaxCursor(ctx context.Context, info *routes.TableInfo, cursor string) (string, bool, error) {
	return g.ep.MaxCursor(ctx, info, cursor)
}

// NullCount counts the rows whose column is NULL.
func (g *GitHub) NullCount(ctx context.Context, info *routes.TableInfo, column string) (int64, error) {
	return g.ep.NullCount(ctx, info, column)
}

// Commit is the commit SHA the URL's ref resolved to.
func (g *GitHub) Commit() string { return g.st.sha }

// Probe finds a table by its stem (orders → orders.csv or orders.csv.gz),
// by its file path, or as a folder (a weir table with its manifest, or a
// folder of CSV files).
func (g *GitHub) Probe(ctx context.Context, ref routes.TableRef) (*routes.TableInfo, error) {
	info, err := g.ep.Probe(ctx, g.fileOf(ref))
	if err != nil {
		return nil, err
	}
	info.Ref = stemRef(ref, strings.Trim(ref.String(), "/")) // as written (a stem, a file, a weir table folder), not the file it found
	return info, nil
}

// fileOf maps a stem to the CSV file of that name, when there is no
// folder or file named exactly so.
func (g *GitHub) fileOf(ref routes.TableRef) routes.TableRef {
	name := strings.Trim(ref.String(), "/")
	if _, ok := g.st.files[name]; ok {
		return ref
	}
	if objs, _ := g.st.List(context.Background(), name); len(objs) > 0 {
		return ref
	}
	for _, ext := range []string{".csv", ".csv.gz"} {
		if _, ok := g.st.files[name+ext]; ok {
			return routes.TableRef{Name: name + ext}
		}
	}
	return ref
}

// ListTables lists the tables under a folder (schema "" or "." the URL's
// PATH): each .csv and .csv.gz file by its stem, and each weir table
// folder (one with a manifest) by its path.
func (g *GitHub) ListTables(_ context.Context, schema string) ([]routes.TableRef, error) {
	dir := strings.Trim(schema, "/")
	if dir == "." {
		dir = ""
	}
	var out []routes.TableRef
	tables := map[string]bool{}
	for _, k := range g.st.keys {
		rel := k
		if dir != "" {
			var ok bool
			if rel, ok = strings.CutPrefix(k, dir+"/"); !ok {
				continue
			}
		}
		if folder, ok := strings.CutSuffix(rel, "/"+ManifestName); ok && !hidden(folder) {
			tables[folder] = true
			continue
		}
		if hidden(rel) || !strings.HasSuffix(strings.ToLower(rel), ".csv") && !strings.HasSuffix(strings.ToLower(rel), ".csv.gz") {
			continue
		}
		if g.inTable(tables, rel) {
			continue
		}
		tables[strings.TrimSuffix(rel, path.Base(rel))+baseName(rel)] = true
	}
	for t := range tables {
		if g.inTable(tables, t) && !strings.Contains(t, "/") {
			continue
		}
		out = append(out, routes.TableRef{Name: path.Join(dir, t)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) == 0 {
		return nil, routes.BadInput("github://%s/%s/%s has no .csv or .csv.gz file at %s", g.st.owner, g.st.repo, path.Join(g.st.prefix, dir), short(g.st.sha))
	}
	return out, nil
}

// inTable reports a file inside a weir table folder (its data files).
func (g *GitHub) inTable(tables map[string]bool, rel string) bool {
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		if _, ok := g.st.files[path.Join(d, ManifestName)]; ok {
			return true
		}
	}
	return false
}

// TableVersion is the commit SHA and the table's content version: the
// blob SHAs (git's content hashes, which GitHub also sends as the files'
// ETags) of the files it reads.
func (g *GitHub) TableVersion(ctx context.Context, info *routes.TableInfo) (revision, version string, err error) {
	r, err := g.ep.resolve(ctx, g.ep.pathOf(info))
	if err != nil {
		return "", "", err
	}
	var shas []string
	if r.manifest != nil {
		shas = append(shas, g.st.files[joinKey(r.path, ManifestName)].sha)
	}
	for _, f := range r.files {
		shas = append(shas, g.st.files[f.Key].sha)
	}
	return g.st.sha, strings.Join(shas, ","), nil
}

// errContentsRead says what a 403 without a rate limit lacks.
const errContentsRead = "the token lacks the contents:read permission for this repository"
