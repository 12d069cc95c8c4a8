package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLintCmd_EnvFrom: --env-from names the variables the pods will have;
// a task whose own connections need one more is an error (exit 1).
func TestLintCmd_EnvFrom(t *testing.T) {
	dir := t.TempDir()
	partial := filepath.Join(dir, "partial.env")
	os.WriteFile(partial, []byte("# the app's secret\nexport APP_PG_URL=postgres://x\nSHOP_USER=u\n"), 0o644)
	full := filepath.Join(dir, "full.env")
	os.WriteFile(full, []byte("APP_PG_URL=a\nSHOP_USER=b\nSHOP_PASSWORD=c\nKAFKA_BROKERS=d\nCH_USER\nCH_PASSWORD=\n"), 0o644)
	bad := filepath.Join(dir, "bad.env")
	os.WriteFile(bad, []byte("not a name=1\n"), 0o644)
	const dag = "../../examples/medallion/weir.yaml"

	code, out := runCmd(t, "lint", "-f", dag, "--env-from", partial, "--format", "json")
	var r lintReport
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 1 {
		t.Fatalf("partial: exit %d, %v: %s", code, err, out)
	}
	missing := map[string]string{}
	for _, f := range r.Findings {
		if f.Rule == "ENV-001" {
			missing[f.Task] = f.Message
		}
	}
	if len(missing) != 3 || !strings.HasSuffix(missing["bronze_catalog"], "does not provide: SHOP_PASSWORD") || missing["bronze_orders"] != "" {
		t.Errorf("ENV-001 findings: %v", missing)
	}
	if code, out := runCmd(t, "lint", "-f", dag, "--env-from", partial, "--env-from", full); code != 0 || strings.Contains(out, "ENV-001") {
		t.Errorf("full: exit %d: %s", code, out)
	}
	if code, _ := runCmd(t, "lint", "-f", dag, "--env-from", bad); code != ExitBadInput {
		t.Errorf("bad env file: exit %d, want 2", code)
	}
}
