package main

import (
	"encoding/json"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	code, out := runCmd(t, "version", "--json")
	if code != 0 {
		t.Fatalf("weir version --json: exit %d", code)
	}
	var b buildInfo
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatalf("weir version --json printed %q: %v", out, err)
	}
	if b.Version == "" || b.Go != runtime.Version() || b.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("build info %+v: want a version, Go %s, platform %s/%s", b, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
	// This test binary links DuckDB exactly when cgo is on, with or without
	// any build tag; the engine reports its own version (v1.2.3 or v2.0.0
	// style).
	if withEngine && !regexp.MustCompile(`^v\d+\.\d+\.\d+`).MatchString(b.DuckDB) {
		t.Errorf("a cgo build (tags %q) reports DuckDB %q, want vX.Y.Z", b.BuildTags, b.DuckDB)
	}
	if !withEngine && b.DuckDB != "none" {
		t.Errorf("a build without cgo reports DuckDB %q, want none", b.DuckDB)
	}

	code, line := runCmd(t, "--version")
	if code != 0 || !strings.HasPrefix(line, "weir "+b.Version) || !strings.Contains(line, "DuckDB "+b.DuckDB) {
		t.Errorf("weir --version: exit %d, %q; want the line of weir version (%s, DuckDB %s)", code, line, b.Version, b.DuckDB)
	}
}
