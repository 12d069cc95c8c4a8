// Package githubapi is the github+api:// source: a GitHub repository's
// issues, pull requests, comments, commits, stargazers, releases, workflow
// runs, branches, tags and labels as typed tables, read from the REST API
// page by page (routes/githubclient: go-github, rate-limit waits).
package githubapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/google/go-github/v75/github"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/githubclient"
)

// Scheme is github+api://OWNER/REPO[?token=…&endpoint=…]; a source only.
const Scheme = "github+api"

// params are the URL's query parameters: token (else GITHUB_TOKEN) and
// endpoint (the REST API's base URL, for GitHub Enterprise Server or a
// test peer).
var params = []string{"token", "endpoint"}

// perPage is the listing's page size (GitHub's maximum).
const perPage = 100

func init() {
	routes.RegisterScheme(routes.SchemeInfo{Name: Scheme, Source: true}, open)
}

// Source reads one repository's tables.
type Source struct {
	api         *githubclient.Client
	url         *routes.URL
	owner, repo string
}

var (
	_ routes.Source       = (*Source)(nil)
	_ routes.CursorSource = (*Source)(nil)
	_ routes.TableLister  = (*Source)(nil)
)

func open(ctx context.Context, u *routes.URL) (routes.Endpoint, error) {
	q := u.URL().Query()
	for k := range q {
		if !slices.Contains(params, k) {
			return nil, routes.BadInput("%s: unknown parameter %q (known: %s)", u, k, strings.Join(params, ", "))
		}
	}
	owner, repo := u.URL().Host, strings.Trim(u.URL().Path, "/")
	if owner == "" || repo == "" || strings.Contains(repo, "/") {
		return nil, routes.BadInput("%s: want github+api://OWNER/REPO[?token=…&endpoint=…]", u)
	}
	api, err := githubclient.New(q.Get("endpoint"), q.Get("token"))
	if err != nil {
		return nil, routes.BadInput("%s: endpoint: %v", u, err)
	}
	s := &Source{api: api, url: u, owner: owner, repo: repo}
	err = api.Call(ctx, "repository "+owner+"/"+repo, func(c *github.Client) (*github.Response, error) {
		_, resp, err := c.Repositories.Get(ctx, owner, repo)
		return resp, err
	})
	switch githubclient.Status(err) {
	case 0:
		return s, nil
	case http.StatusNotFound:
		return nil, routes.BadInput("github repository %s/%s does not exist, or the token cannot see it (a private repository needs GITHUB_TOKEN or ?token=)", owner, repo)
	}
	return nil, githubclient.Refused(err, "read repository "+owner+"/"+repo, "the token cannot read this repository's metadata")
}

// Close releases nothing: the client holds no connection of its own.
func (s *Source) Close() error { return nil }

// ListTables is every table, whatever the schema (a repository has one
// set of tables).
func (s *Source) ListTables(context.Context, string) ([]routes.TableRef, error) {
	out := make([]routes.TableRef, len(tableNames))
	for i, n := range tableNames {
		out[i] = routes.TableRef{Name: n}
	}
	return out, nil
}

// Probe describes one of the ten tables; no request is made (the
// repository and the token were checked when the URL opened).
func (s *Source) Probe(_ context.Context, ref routes.TableRef) (*routes.TableInfo, error) {
	t, ok := tables[ref.Name]
	if !ok || ref.Schema != "" {
		return nil, &routes.ProbeError{Table: ref.String(), Problem: "no such table in github+api://" + s.owner + "/" + s.repo,
			Hint: "the tables are " + strings.Join(tableNames, ", "), Err: routes.ErrNotFound}
	}
	info := &routes.TableInfo{Scheme: Scheme, SourceID: s.url.Identity() + "#" + t.name, Ref: routes.TableRef{Name: t.name},
		PrimaryKey: []string{t.key}}
	for _, c := range t.columns {
		info.Columns = append(info.Columns, routes.Column{Name: c.name, Type: arrowType(c.kind), Nullable: !c.required, NativeType: nativeType(c.kind)})
	}
	return info, nil
}

// Plan is one range: a listing is paged in order, one page after another.
func (s *Source) Plan(_ context.Context, info *routes.TableInfo, _ routes.PlanOptions) ([]routes.Range, error) {
	return []routes.Range{{Table: info, Count: 1, Label: "github+api://" + s.owner + "/" + s.repo + " " + info.Ref.Name}}, nil
}

func (s *Source) table(info *routes.TableInfo) (*table, error) {
	t, ok := tables[info.Ref.Name]
	if !ok {
		return nil, routes.BadInput("github+api: no table %q (the tables are %s)", info.Ref.Name, strings.Join(tableNames, ", "))
	}
	return t, nil
}

// list pages through a table's listing, handing each object (as sent, and
// decoded) to each, which may stop the listing. Pages come one at a time
// by the Link header's next page; a page is let go before the next.
func (s *Source) list(ctx context.Context, t *table, extra url.Values, each func(raw json.RawMessage, obj map[string]any) (stop bool, err error)) error {
	q := url.Values{}
	for k, v := range t.query {
		q[k] = v
	}
	for k, v := range extra {
		q[k] = v
	}
	q.Set("per_page", fmt.Sprint(perPage))
	for page := 1; page != 0; {
		q.Set("page", fmt.Sprint(page))
		path := fmt.Sprintf("repos/%s/%s/%s?%s", url.PathEscape(s.owner), url.PathEscape(s.repo), t.endpoint, q.Encode())
		var body json.RawMessage
		var next int
		what := fmt.Sprintf("%s of %s/%s, page %d", t.name, s.owner, s.repo, page)
		err := s.api.Call(ctx, what, func(c *github.Client) (*github.Response, error) {
			req, err := c.NewRequest(http.MethodGet, path, nil)
			if err != nil {
				return nil, err
			}
			if t.accept != "" {
				req.Header.Set("Accept", t.accept)
			}
			body = nil
			resp, err := c.Do(ctx, req, &body)
			if resp != nil {
				next = resp.NextPage
			}
			return resp, err
		})
		if t.emptyRepo != 0 && githubclient.Status(err) == t.emptyRepo {
			return nil // a repository without commits has none to list
		}
		if err != nil {
			return githubclient.Refused(err, "list "+what, "the token cannot read "+t.name)
		}
		items, err := pageItems(body, t.envelope)
		if err != nil {
			return fmt.Errorf("list %s: %w", what, err)
		}
		for _, raw := range items {
			obj, err := decodeObject(raw)
			if err != nil {
				return fmt.Errorf("list %s: %w", what, err)
			}
			if t.skip != nil && t.skip(obj) {
				continue
			}
			stop, err := each(raw, obj)
			if err != nil || stop {
				return err
			}
		}
		page = next
	}
	return nil
}

// pageItems splits a page into its objects (inside envelope when the list
// is a field of the answer).
func pageItems(body json.RawMessage, envelope string) ([]json.RawMessage, error) {
	if envelope != "" {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(body, &obj); err != nil {
			return nil, fmt.Errorf("decode the answer: %w", err)
		}
		body = obj[envelope]
		if body == nil {
			return nil, nil
		}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(body, &items); err != nil {
		return nil, fmt.Errorf("decode the answer: want a JSON array: %w", err)
	}
	return items, nil
}

func decodeObject(raw json.RawMessage) (map[string]any, error) {
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	var obj map[string]any
	if err := d.Decode(&obj); err != nil {
		return nil, fmt.Errorf("decode an object: %w", err)
	}
	return obj, nil
}
