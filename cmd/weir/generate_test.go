package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenerateCmd_Check: --check exits 0 when the files on disk are what
// the dagfile generates, 1 listing each file changed or missing, and
// writes nothing.
func TestGenerateCmd_Check(t *testing.T) {
	const dag = "../../examples/quickstart/weir.yaml"
	for _, target := range []string{"airflow", "dagster", "argo"} {
		t.Run(target, func(t *testing.T) {
			out := t.TempDir()
			if code, _ := runCmd(t, "generate", target, "-f", dag, "-o", out); code != 0 {
				t.Fatalf("generate exited %d", code)
			}
			entries, _ := os.ReadDir(out)
			if code, stdout := runCmd(t, "generate", target, "-f", dag, "-o", out, "--check"); code != 0 || stdout != "" {
				t.Fatalf("check of fresh files: exit %d: %q", code, stdout)
			}
			changed := filepath.Join(out, entries[0].Name())
			data, _ := os.ReadFile(changed)
			os.WriteFile(changed, append(data, '\n'), 0o644)
			code, stdout := runCmd(t, "generate", target, "-f", dag, "-o", out, "--check")
			if code != 1 || strings.TrimSpace(stdout) != changed {
				t.Errorf("check of a changed file: exit %d: %q", code, stdout)
			}
			if after, _ := os.ReadFile(changed); len(after) != len(data)+1 {
				t.Errorf("--check rewrote %s", changed)
			}
			os.Remove(changed)
			if code, stdout := runCmd(t, "generate", target, "-f", dag, "-o", out, "--check"); code != 1 || !strings.Contains(stdout, changed+" (missing)") {
				t.Errorf("check of a missing file: exit %d: %q", code, stdout)
			}
			runCmd(t, "generate", target, "-f", dag, "-o", out)
			if code, stdout := runCmd(t, "generate", target, "-f", dag, "-o", out, "--check", "--weir-bin", "/opt/weir"); code != 1 || stdout == "" {
				t.Errorf("check under other flags: exit %d, want 1", code)
			}
		})
	}
}

// TestGenerateCmd_PodWarnings: generating pods for the quickstart (a local
// lake, no volume) warns K8S-001 per task on stderr; bash does not.
func TestGenerateCmd_PodWarnings(t *testing.T) {
	const dag = "../../examples/quickstart/weir.yaml"
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"generate", "argo"}, 6}, // one per task and local connection
		{[]string{"generate", "airflow", "--operator", "kubernetes"}, 6},
		{[]string{"generate", "airflow"}, 0},
	} {
		var stderr strings.Builder
		root := newRoot()
		root.SetArgs(append(tc.args, "-f", dag, "-o", t.TempDir()))
		root.SetOut(&strings.Builder{})
		root.SetErr(&stderr)
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := strings.Count(stderr.String(), "K8S-001"); got != tc.want {
			t.Errorf("%v: %d K8S-001 warnings, want %d:\n%s", tc.args, got, tc.want, stderr.String())
		}
	}
}
