package githubapi

import (
	"net/http"
	"net/url"
	"strings"
)

// kind is how a typed column is decoded from the API's JSON.
type kind int

const (
	kindInt  kind = iota // a JSON number: int64 ("bigint")
	kindText             // a JSON string: "text"
	kindBool             // a JSON boolean: "boolean"
	kindTime             // an ISO 8601 string: timestamptz, microseconds UTC
	kindRaw              // the whole object as sent: "json"
)

// column is one typed column: its name and the JSON path it is read from
// (user.login is the login of the object's user).
type column struct {
	name     string
	kind     kind
	path     []string
	required bool // never null in the API's answer (the key, a cursor)
}

// table is one list endpoint of a repository as a table.
type table struct {
	name     string
	endpoint string     // below repos/OWNER/REPO/
	query    url.Values // fixed parameters of the listing
	key      string
	columns  []column
	// since names the cursor column the endpoint filters server-side with
	// since= (issues, issue comments: updated_at; commits: the commit date).
	since string
	// updatedDesc: the listing can be sorted by updated_at, newest first
	// (sort=updated&direction=desc): the cursor's maximum is its first row,
	// and pull_requests (no since=) stop paging at the watermark.
	updatedDesc bool
	envelope    string // the list is this field of an object (workflow_runs)
	emptyRepo   int    // the status the listing answers for a repository without commits (commits: 409)
	accept      string // a media type besides the default
	// skip drops an object of the listing that is not a row of the table
	// (the issues listing also returns pull requests).
	skip func(obj map[string]any) bool
}

func col(name string, k kind, path string) column {
	if path == "" {
		path = name
	}
	return column{name: name, kind: k, path: strings.Split(path, ".")}
}

func required(c column) column { c.required = true; return c }

var rawColumn = col("raw", kindRaw, "")

// tables are the ten tables of github+api://, by name.
var tables = map[string]*table{
	"issues": {
		endpoint: "issues", query: url.Values{"state": {"all"}, "sort": {"updated"}, "direction": {"desc"}},
		key: "id", since: "updated_at", updatedDesc: true,
		skip: func(obj map[string]any) bool { return obj["pull_request"] != nil },
		columns: []column{
			required(col("id", kindInt, "")), col("node_id", kindText, ""), col("number", kindInt, ""),
			col("title", kindText, ""), col("state", kindText, ""), col("state_reason", kindText, ""),
			col("locked", kindBool, ""), col("user_login", kindText, "user.login"),
			col("assignee_login", kindText, "assignee.login"), col("milestone_title", kindText, "milestone.title"),
			col("comments", kindInt, ""), col("author_association", kindText, ""), col("body", kindText, ""),
			col("html_url", kindText, ""), col("created_at", kindTime, ""), required(col("updated_at", kindTime, "")),
			col("closed_at", kindTime, ""), rawColumn,
		},
	},
	"pull_requests": {
		endpoint: "pulls", query: url.Values{"state": {"all"}, "sort": {"updated"}, "direction": {"desc"}},
		key: "id", updatedDesc: true,
		columns: []column{
			required(col("id", kindInt, "")), col("node_id", kindText, ""), col("number", kindInt, ""),
			col("title", kindText, ""), col("state", kindText, ""), col("locked", kindBool, ""),
			col("draft", kindBool, ""), col("user_login", kindText, "user.login"), col("body", kindText, ""),
			col("head_ref", kindText, "head.ref"), col("head_sha", kindText, "head.sha"),
			col("base_ref", kindText, "base.ref"), col("merge_commit_sha", kindText, ""),
			col("author_association", kindText, ""), col("html_url", kindText, ""),
			col("created_at", kindTime, ""), required(col("updated_at", kindTime, "")),
			col("closed_at", kindTime, ""), col("merged_at", kindTime, ""), rawColumn,
		},
	},
	"issue_comments": {
		endpoint: "issues/comments", query: url.Values{"sort": {"updated"}, "direction": {"desc"}},
		key: "id", since: "updated_at", updatedDesc: true,
		columns: []column{
			required(col("id", kindInt, "")), col("node_id", kindText, ""), col("issue_url", kindText, ""),
			col("user_login", kindText, "user.login"), col("body", kindText, ""),
			col("author_association", kindText, ""), col("html_url", kindText, ""),
			col("created_at", kindTime, ""), required(col("updated_at", kindTime, "")), rawColumn,
		},
	},
	"commits": {
		endpoint: "commits", key: "sha", since: "committed_at", emptyRepo: http.StatusConflict,
		columns: []column{
			required(col("sha", kindText, "")), col("node_id", kindText, ""),
			col("message", kindText, "commit.message"),
			col("author_name", kindText, "commit.author.name"), col("author_email", kindText, "commit.author.email"),
			col("authored_at", kindTime, "commit.author.date"), col("author_login", kindText, "author.login"),
			col("committer_name", kindText, "commit.committer.name"), col("committer_email", kindText, "commit.committer.email"),
			required(col("committed_at", kindTime, "commit.committer.date")), col("committer_login", kindText, "committer.login"),
			col("html_url", kindText, ""), rawColumn,
		},
	},
	"stargazers": {
		endpoint: "stargazers", key: "id", accept: "application/vnd.github.star+json",
		columns: []column{
			required(col("id", kindInt, "user.id")), col("login", kindText, "user.login"),
			col("starred_at", kindTime, ""), rawColumn,
		},
	},
	"releases": {
		endpoint: "releases", key: "id",
		columns: []column{
			required(col("id", kindInt, "")), col("node_id", kindText, ""), col("tag_name", kindText, ""),
			col("name", kindText, ""), col("target_commitish", kindText, ""), col("draft", kindBool, ""),
			col("prerelease", kindBool, ""), col("author_login", kindText, "author.login"), col("body", kindText, ""),
			col("html_url", kindText, ""), col("created_at", kindTime, ""), col("published_at", kindTime, ""), rawColumn,
		},
	},
	"workflow_runs": {
		endpoint: "actions/runs", key: "id", envelope: "workflow_runs",
		columns: []column{
			required(col("id", kindInt, "")), col("node_id", kindText, ""), col("name", kindText, ""),
			col("workflow_id", kindInt, ""), col("run_number", kindInt, ""), col("run_attempt", kindInt, ""),
			col("event", kindText, ""), col("status", kindText, ""), col("conclusion", kindText, ""),
			col("head_branch", kindText, ""), col("head_sha", kindText, ""), col("actor_login", kindText, "actor.login"),
			col("html_url", kindText, ""), col("created_at", kindTime, ""), col("updated_at", kindTime, ""),
			col("run_started_at", kindTime, ""), rawColumn,
		},
	},
	"branches": {
		endpoint: "branches", key: "name",
		columns: []column{
			required(col("name", kindText, "")), col("commit_sha", kindText, "commit.sha"),
			col("protected", kindBool, ""), rawColumn,
		},
	},
	"tags": {
		endpoint: "tags", key: "name",
		columns: []column{
			required(col("name", kindText, "")), col("commit_sha", kindText, "commit.sha"), col("node_id", kindText, ""),
			col("zipball_url", kindText, ""), col("tarball_url", kindText, ""), rawColumn,
		},
	},
	"labels": {
		endpoint: "labels", key: "name",
		columns: []column{
			col("id", kindInt, ""), col("node_id", kindText, ""), required(col("name", kindText, "")),
			col("color", kindText, ""), col("description", kindText, ""), col("default", kindBool, ""), rawColumn,
		},
	},
}

// tableNames are the tables in the order --schema lists them.
var tableNames = []string{"issues", "pull_requests", "issue_comments", "commits", "stargazers",
	"releases", "workflow_runs", "branches", "tags", "labels"}

func init() {
	for _, n := range tableNames {
		tables[n].name = n
	}
}
