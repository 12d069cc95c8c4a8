package main

import (
	"strings"
	"testing"

	"github.com/weirhq/weir/routes/githubapi/githubapitest"
)

// TestAttackS10_GitHubAPIBadValues: an object whose field does not hold
// its documented type (an issue's created_at that is not RFC 3339, a
// comments count that is text) is bad input: exit 2 naming the table and
// the column, and the token never printed. The message names both
// ("issues: column created_at: the API sent yesterday for created_at, not
// a timestamptz") but the run exits 1, as for a failure worth retrying.
func TestAttackS10_GitHubAPIBadValues(t *testing.T) {
	const secret = "ghp_S3CRETT0KEN"
	s := githubapitest.NewServer(t)
	s.Token = secret
	issue := func(id int, field string, v any) map[string]any {
		o := map[string]any{"id": id, "node_id": "I", "number": id, "title": "t", "state": "open", "user": map[string]any{"id": 1, "login": "u"},
			"comments": 0, "created_at": "2024-01-02T03:04:05Z", "updated_at": "2024-01-02T03:04:05Z"}
		o[field] = v
		return o
	}
	for _, tc := range []struct{ repo, field string }{
		{"o/baddate", "created_at"},
		{"o/badcount", "comments"},
		{"o/noupdated", "updated_at"}, // a required column the API left null
	} {
		t.Run(tc.repo, func(t *testing.T) {
			s.CreateRepo(tc.repo)
			var bad any = "yesterday"
			switch tc.field {
			case "comments":
				bad = "many"
			case "updated_at":
				bad = nil
			}
			s.Put(tc.repo, "issues", issue(1, "title", "fine"), issue(2, tc.field, bad))
			url := "github+api://" + tc.repo + "?endpoint=" + s.URL + "&token=" + secret
			code, stdout, stderr := runCmdErr(t, "transfer", url, "file://"+t.TempDir(), "--table", "issues")
			all := stdout + stderr
			if strings.Contains(all, secret) {
				t.Errorf("output shows the token:\n%s", all)
			}
			if code != ExitBadInput {
				t.Errorf("exit %d, want %d (bad input naming issues.%s):\n%s", code, ExitBadInput, tc.field, all)
			}
		})
	}
}
