package runner

import (
	"path/filepath"
	"regexp"
	"strings"
)

// Relative paths in connection URLs resolve against the dagfile's folder,
// never the working directory, so `weir once -f dir/weir.yaml` (what an
// orchestrator runs, from wherever it runs) and `cd dir && weir once` read
// and write the same files. A path is relative when it starts with ./ or
// ../:
//
//	file://./data                      → file:///abs/dir/data
//	./data  (a bare path)              → /abs/dir/data
//	iceberg://?uri=sqlite://./lake/catalog.db&warehouse=file://./lake
//	                                   → iceberg://?uri=sqlite:///abs/dir/lake/catalog.db&warehouse=file:///abs/dir/lake
//	…?warehouse=./lake                 → …?warehouse=/abs/dir/lake
//
// Absolute paths and paths without ./ or ../ are left alone.

// relURL finds scheme://./path and scheme://../path, anywhere in a URL.
var relURL = regexp.MustCompile(`\b(file|sqlite3?)://(\.\.?/[^&#?]*|\.\.?$|\.\.?(?:[&#?]))`)

// relParam finds a query parameter whose value is a ./ or ../ path.
var relParam = regexp.MustCompile(`([?&][A-Za-z0-9_.-]+=)(\.\.?/[^&#]*)`)

// ResolveURL makes the relative paths of a connection URL absolute against
// dir (the dagfile's folder).
func ResolveURL(raw, dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	if !strings.Contains(raw, "://") && !strings.HasPrefix(raw, "file:") {
		if raw == "" || filepath.IsAbs(raw) {
			return raw
		}
		return filepath.Join(abs, raw)
	}
	out := relURL.ReplaceAllStringFunc(raw, func(m string) string {
		sub := relURL.FindStringSubmatch(m)
		path, tail := splitTail(sub[2])
		return sub[1] + "://" + escapePath(filepath.Join(abs, path)) + tail
	})
	return relParam.ReplaceAllStringFunc(out, func(m string) string {
		sub := relParam.FindStringSubmatch(m)
		return sub[1] + escapePath(filepath.Join(abs, sub[2]))
	})
}

// splitTail separates a trailing & # or ? the pattern consumed.
func splitTail(s string) (path, tail string) {
	if n := len(s); n > 0 && strings.ContainsAny(s[n-1:], "&#?") {
		return s[:n-1], s[n-1:]
	}
	return s, ""
}

// escapePath percent-encodes what would break a URL or its query.
func escapePath(p string) string {
	r := strings.NewReplacer("%", "%25", " ", "%20", "&", "%26", "#", "%23", "?", "%3F", "+", "%2B")
	return filepath.ToSlash(r.Replace(p))
}
