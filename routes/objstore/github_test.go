package objstore_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/objstore"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/routestest"
)

const ghRepo = "acme/data"

func ghURL(g *objstoretest.GitHub, path, query string) string {
	u := "github://" + ghRepo + path + "?endpoint=" + g.URL
	if query != "" {
		u += "&" + query
	}
	return u
}

func gz(t *testing.T, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// ordersCSV has RFC 4180 quoting (a comma, a quote and a line break in a
// field), a short row (NULL-padded) and values of every inferred type.
const ordersCSV = "id,name,amount,at\r\n" +
	"1,plain,1.5,2024-01-31 12:00:00\r\n" +
	"2,\"a, \"\"quoted\"\"\nname\",-2,2024-02-01\r\n" +
	"3,short\r\n"

func ghRepoWithFiles(t *testing.T) (*objstoretest.GitHub, string) {
	g := objstoretest.NewGitHubServer(t)
	g.CreateRepo(ghRepo, false)
	sha := g.Commit(ghRepo, "main", map[string][]byte{
		"README.md":              []byte("# data\n"),
		"csv/orders.csv":         []byte(ordersCSV),
		"csv/in/items.csv.gz":    gz(t, "sku,qty\nA,1\nB,2\n"),
		"csv/_hidden/skip.csv":   []byte("x\n1\n"),
		"csv/notes.txt":          []byte("not a table"),
		"other/elsewhere.csv":    []byte("y\n2\n"),
		"csv/wide/parts.csv":     []byte("a\n1\n"),
		"csv/wide/more/deep.csv": []byte("b\n2\n"),
	})
	return g, sha
}

func openGH(t *testing.T, ctx context.Context, raw string) *objstore.GitHub {
	t.Helper()
	src, err := routes.OpenSource(ctx, raw)
	if err != nil {
		t.Fatalf("open %s: %v", routes.Redact(raw), err)
	}
	t.Cleanup(func() { src.Close() })
	return src.(*objstore.GitHub)
}

// ghRead reads every row of a table as text, cell by cell.
func ghRead(t *testing.T, ctx context.Context, src routes.Source, table string) (*routes.TableInfo, []string) {
	t.Helper()
	info, err := src.Probe(ctx, routes.TableRef{Name: table})
	if err != nil {
		t.Fatalf("probe %s: %v", table, err)
	}
	var rows []string
	err = objstoretest.ReadAll(ctx, src, info, func(rec arrow.RecordBatch) error {
		for i := range int(rec.NumRows()) {
			var cells []string
			for _, c := range rec.Columns() {
				cells = append(cells, cellText(c, i))
			}
			rows = append(rows, strings.Join(cells, "|"))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	return info, rows
}

func colTypes(info *routes.TableInfo) string {
	var out []string
	for _, c := range info.Columns {
		out = append(out, c.Name+" "+c.Type.String())
	}
	return strings.Join(out, ", ")
}

// A table is a .csv or .csv.gz file named by its stem (or its path), read
// by the file route's CSV reader at the commit the ref resolved to: types
// inferred, RFC 4180 quoting, short rows NULL-padded; --schema lists every
// CSV under PATH, hidden folders and other files left out.
func TestGitHub_TablesByStem(t *testing.T) {
	ctx := testContext(t)
	g, sha := ghRepoWithFiles(t)
	src := openGH(t, ctx, ghURL(g, "/csv", "ref=main"))
	if src.Commit() != sha {
		t.Fatalf("ref main resolved to %s, want %s", src.Commit(), sha)
	}
	info, rows := ghRead(t, ctx, src, "orders")
	if got, want := colTypes(info), "id int64, name utf8, amount float64, at timestamp[us]"; got != want {
		t.Errorf("orders columns: %s, want %s", got, want)
	}
	if info.Ref.Name != "orders" || !strings.HasSuffix(info.SourceID, "#orders.csv") {
		t.Errorf("orders probed as %s (source id %s)", info.Ref, info.SourceID)
	}
	want := []string{"1|plain|1.5|2024-01-31 12:00:00", "2|a, \"quoted\"\nname|-2|2024-02-01 00:00:00", "3|short|NULL|NULL"}
	slices.Sort(rows)
	if !slices.Equal(rows, want) {
		t.Errorf("orders rows:\n%q\nwant\n%q", rows, want)
	}
	for _, name := range []string{"in/items", "in/items.csv.gz"} {
		info, rows := ghRead(t, ctx, src, name)
		if info.Ref.Name != "items" || strings.Join(rows, ";") != "A|1;B|2" {
			t.Errorf("%s: table %s rows %q", name, info.Ref, rows)
		}
	}
	tables, err := src.ListTables(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tb := range tables {
		names = append(names, tb.Name)
	}
	if got := strings.Join(names, ","); got != "in/items,orders,wide/more/deep,wide/parts" {
		t.Errorf("--schema lists %s", got)
	}
	if sub, err := src.ListTables(ctx, "wide"); err != nil || len(sub) != 2 || sub[0].Name != "wide/more/deep" {
		t.Errorf("--schema wide lists %v, %v", sub, err)
	}
}

// Bad input is exit 2 (ErrBadInput) when the URL opens, before a row
// moves, and the token never shows: an unknown repository, a private one
// without a token, a refused token, a ref or PATH that does not exist, an
// unknown parameter; an unknown table is a ProbeError (not found).
func TestGitHub_BadInputRefused(t *testing.T) {
	ctx := testContext(t)
	g, _ := ghRepoWithFiles(t)
	g.Token = "ghp_rightTOKEN123"
	g.CreateRepo("acme/secret", true)
	g.Commit("acme/secret", "main", map[string][]byte{"a.csv": []byte("x\n1\n")})
	const wrong = "ghp_wrongTOKEN456"
	for _, tc := range []struct{ name, url, want string }{
		{"unknown repo", "github://acme/nope?endpoint=" + g.URL, "acme/nope does not exist"},
		{"private without token", "github://acme/secret?endpoint=" + g.URL, "acme/secret does not exist, or the token cannot see it"},
		{"refused token", "github://acme/secret?token=" + wrong + "&endpoint=" + g.URL, "refused the token"},
		{"unknown ref", ghURL(g, "", "ref=v9.9"), `no branch, tag or commit "v9.9"`},
		{"unknown path", ghURL(g, "/csv/nowhere", ""), "no folder csv/nowhere"},
		{"path is a file", ghURL(g, "/README.md", ""), "no folder README.md"},
		{"unknown parameter", ghURL(g, "", "branch=main"), `unknown parameter "branch"`},
		{"no repo", "github://acme?endpoint=" + g.URL, "want github://OWNER/REPO"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := routes.OpenSource(ctx, tc.url)
			if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want bad input with %q", err, tc.want)
			}
			if strings.Contains(err.Error(), wrong) {
				t.Fatalf("the token is printed: %v", err)
			}
		})
	}
	if r := routes.Redact("github://acme/secret/csv?ref=main&token=" + wrong); strings.Contains(r, wrong) {
		t.Fatalf("Redact shows a github:// token: %s", r)
	}
	t.Setenv("GITHUB_TOKEN", g.Token)
	src := openGH(t, ctx, "github://acme/secret?endpoint="+g.URL)
	if _, rows := ghRead(t, ctx, src, "a"); len(rows) != 1 {
		t.Fatalf("private repository with GITHUB_TOKEN: %q", rows)
	}
	_, err := src.Probe(ctx, routes.TableRef{Name: "b"})
	var pe *routes.ProbeError
	if !errors.As(err, &pe) || !errors.Is(err, routes.ErrNotFound) || !errors.Is(err, routes.ErrBadInput) {
		t.Fatalf("unknown table: %v", err)
	}
	if _, err := routes.OpenDestination(ctx, "github://acme/secret?endpoint="+g.URL); err == nil {
		t.Fatal("github:// opened as a destination")
	}
}

// The ref is pinned at open: a commit pushed meanwhile is not read by
// that endpoint; a tag and a full SHA resolve like a branch.
func TestGitHub_RefPinned(t *testing.T) {
	ctx := testContext(t)
	g, first := ghRepoWithFiles(t)
	g.Tag(ghRepo, "v1", first)
	src := openGH(t, ctx, ghURL(g, "/csv", "ref=main"))
	g.Commit(ghRepo, "main", map[string][]byte{"csv/orders.csv": []byte("id\n9\n")})
	if _, rows := ghRead(t, ctx, src, "orders"); len(rows) != 3 {
		t.Fatalf("an open endpoint read the newer commit: %q", rows)
	}
	for _, ref := range []string{"v1", first} {
		if got := openGH(t, ctx, ghURL(g, "/csv", "ref="+ref)).Commit(); got != first {
			t.Errorf("ref %s resolved to %s, want %s", ref, got, first)
		}
	}
	if _, rows := ghRead(t, ctx, openGH(t, ctx, ghURL(g, "/csv", "")), "orders"); strings.Join(rows, ";") != "9" {
		t.Fatalf("the default branch's new commit: %q", rows)
	}
}

// A replace whose table files have the blob SHAs (GitHub's ETags for
// them) the last replace committed is a no-op that says so and reads no
// content; a commit that changes other files keeps it unchanged; a commit
// that changes the table reads it again. The commit SHA is in the report
// and in the destination's state.
func TestGitHub_UnchangedReplaceIsNoop(t *testing.T) {
	ctx := testContext(t)
	g, first := ghRepoWithFiles(t)
	dst := objstoretest.NewFile(t)
	orders := []byte(ordersCSV)
	run := func(mode routes.Mode) routes.CopyResult {
		t.Helper()
		src := openGH(t, ctx, ghURL(g, "/csv", "ref=main"))
		d := dst.Endpoint(t, ctx)
		res, err := routes.Copy(ctx, src, d, routes.CopySpec{Table: routes.TableRef{Name: "orders"}, Mode: mode})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		return res
	}
	res := run(routes.ModeReplace)
	if res.Unchanged || res.Rows != 3 || res.SourceRevision != first || g.BlobReads(orders) != 2 { // probe + read
		t.Fatalf("first replace: %+v, %d content reads", res, g.BlobReads(orders))
	}
	st, ok, err := dst.Endpoint(t, ctx).LoadState(ctx, routes.TableRef{Name: "orders"}, "github://acme/data/csv#orders.csv")
	if err != nil || !ok || !strings.HasSuffix(st.Position, " rev="+first) {
		t.Fatalf("state after replace: %+v %v %v", st, ok, err)
	}
	res = run(routes.ModeReplace)
	if !res.Unchanged || res.Rows != 0 || g.BlobReads(orders) != 3 { // the probe's inference only
		t.Fatalf("replace of an unchanged file: %+v, %d content reads", res, g.BlobReads(orders))
	}
	files := map[string][]byte{"csv/orders.csv": orders, "csv/other.csv": []byte("z\n1\n")}
	second := g.Commit(ghRepo, "main", files)
	if res = run(routes.ModeReplace); !res.Unchanged || res.SourceRevision != second {
		t.Fatalf("replace after a commit to another file: %+v", res)
	}
	files["csv/orders.csv"] = []byte(ordersCSV + "4,new\r\n")
	g.Commit(ghRepo, "main", files)
	if res = run(routes.ModeReplace); res.Unchanged || res.Rows != 4 {
		t.Fatalf("replace after the file changed: %+v", res)
	}
	if res = run(routes.ModeAppend); res.Unchanged {
		t.Fatalf("append is never skipped as unchanged: %+v", res)
	}
}

// GitHub's rate limits are waited out and the read completes: the primary
// limit (403, X-RateLimit-Remaining: 0, until X-RateLimit-Reset), the
// secondary one (403 with Retry-After) and a 429 with Retry-After, and a
// 502; a limit that never lifts fails after a bounded number of tries.
func TestGitHub_RateLimitsWaited(t *testing.T) {
	ctx := testContext(t)
	g, _ := ghRepoWithFiles(t)
	var faults atomic.Int64
	plan := []func(h http.Header) (int, string){
		func(h http.Header) (int, string) {
			h.Set("X-RateLimit-Remaining", "0")
			h.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Unix(), 10))
			return http.StatusForbidden, `{"message":"API rate limit exceeded"}`
		},
		func(h http.Header) (int, string) {
			h.Set("Retry-After", "0")
			return http.StatusForbidden, `{"message":"You have exceeded a secondary rate limit","documentation_url":"https://docs.example/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`
		},
		func(h http.Header) (int, string) {
			h.Set("Retry-After", "0")
			return http.StatusTooManyRequests, `{"message":"too many"}`
		},
		func(h http.Header) (int, string) { return http.StatusBadGateway, `{"message":"bad gateway"}` },
	}
	g.Fault = func(r *http.Request) (int, http.Header, string, bool) {
		if !strings.Contains(r.URL.Path, "/git/blobs/") {
			return 0, nil, "", false
		}
		n := faults.Add(1) - 1
		if int(n) >= len(plan) {
			return 0, nil, "", false
		}
		h := http.Header{}
		code, body := plan[n](h)
		return code, h, body, true
	}
	_, rows := ghRead(t, ctx, openGH(t, ctx, ghURL(g, "/csv", "")), "orders")
	if len(rows) != 3 || faults.Load() < int64(len(plan)) {
		t.Fatalf("read %d rows through %d faults", len(rows), faults.Load())
	}
	g.Fault = func(r *http.Request) (int, http.Header, string, bool) {
		return http.StatusTooManyRequests, http.Header{"Retry-After": {"0"}}, `{"message":"too many"}`, true
	}
	_, err := routes.OpenSource(ctx, ghURL(g, "/csv", ""))
	if err == nil || !strings.Contains(err.Error(), "still rate limited") {
		t.Fatalf("a limit that never lifts: %v", err)
	}
}

// A 50 MB CSV file is streamed in batches: the heap grows by a fraction
// of the file while it is read, never by the whole file.
func TestGitHub_LargeFileBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB file")
	}
	ctx := testContext(t)
	g := objstoretest.NewGitHubServer(t)
	g.CreateRepo(ghRepo, false)
	var b bytes.Buffer
	b.WriteString("id,name,amount\n")
	for i := 0; b.Len() < 50<<20; i++ {
		fmt.Fprintf(&b, "%d,name %d with some padding text to make the row longer,%d.25\n", i, i, i)
	}
	size, lines := b.Len(), bytes.Count(b.Bytes(), []byte("\n"))-1
	g.Commit(ghRepo, "main", map[string][]byte{"big.csv": b.Bytes()})
	b = bytes.Buffer{}
	src := openGH(t, ctx, ghURL(g, "", ""))
	info, err := src.Probe(ctx, routes.TableRef{Name: "big"})
	if err != nil {
		t.Fatal(err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(10)) // measure what is live, not garbage the pacer lets grow
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
		}
	}()
	var rows int64
	ranges, _ := src.Plan(ctx, info, routes.PlanOptions{Pipes: 1})
	s, err := src.Read(ctx, ranges[0], routes.ReadOptions{ChunkBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for s.Next() {
		rows += s.RecordBatch().NumRows()
	}
	err = s.Err()
	s.Release()
	close(stop)
	wg.Wait()
	if err != nil || rows != int64(lines) {
		t.Fatalf("read %d rows of %d: %v", rows, lines, err)
	}
	if grew := int64(peak.Load()) - int64(base.HeapInuse); grew > int64(size)/2 {
		t.Fatalf("reading a %d MB file grew the heap by %d MB", size>>20, grew>>20)
	}
}

// The GitHub peer (objstoretest.GitHub) holds weir tables written as CSV:
// the source contract runs on github:// over it.
func TestGitHub_Contract(t *testing.T) {
	routestest.RunSourceTests(t, objstoretest.NewGitHub(t), routestest.CapsOf("file"))
}
