package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/redact/redacttest"
)

// runCmdPrinted runs the CLI in-process and returns its output and what main
// prints for its error.
func runCmdPrinted(t *testing.T, args ...string) (out, printed string) {
	t.Helper()
	var b bytes.Buffer
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(&b)
	root.SetErr(&b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := root.ExecuteContext(ctx); err != nil {
		printed = "weir: " + redactErr(err)
	}
	return b.String(), printed
}

// TestDocSecretsHidden runs every secret-bearing URL of docs/ through the
// factory errors, weir transfer's errors (as source and as destination)
// and weir status: the secret never shows.
func TestDocSecretsHidden(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "t.csv"), []byte("id,name\n1,a\n"), 0o644)
	for i, u := range redacttest.DocSecrets {
		scheme := u[:strings.Index(u, "://")]
		registered := slices.Contains(routes.Schemes(), scheme)
		t.Run(fmt.Sprint(i, "_", scheme), func(t *testing.T) {
			check := func(where, text string) {
				t.Helper()
				if strings.Contains(text, redacttest.Marker) {
					t.Errorf("%s shows the secret of %s:\n%s", where, u, text)
				}
			}
			if registered {
				ep, err := routes.Open(context.Background(), u)
				if err == nil {
					ep.Close()
				} else {
					check("the factory error", err.Error())
				}
				check("weir transfer (source)", strings.Join(runCmdOut(t, "transfer", u, "file://"+dir+"/out", "--table", "public.t", "--json"), "\n"))
				check("weir transfer (destination)", strings.Join(runCmdOut(t, "transfer", "file://"+dir, u, "--table", "t.csv", "--json"), "\n"))
			}
			check("weir status", strings.Join(runCmdOut(t, "status", "-f", statusDag(t, u, registered), "--json"), "\n"))
		})
	}
}

func runCmdOut(t *testing.T, args ...string) []string {
	out, printed := runCmdPrinted(t, args...)
	return []string{out, printed}
}

// statusDag writes a dagfile whose one task reads u: a transfer from the
// connection u (a route) or a stream with u as its inline source.
func statusDag(t *testing.T, u string, route bool) string {
	dir := t.TempDir()
	task := "  t:\n    transfer: {from: src, table: public.t, to: dst, mode: append, cursor: id}\n"
	conns := fmt.Sprintf("  src: %q\n  dst: %q\n", u, "file://"+dir)
	if !route {
		task = fmt.Sprintf("  t:\n    stream: {source: %q, sink: \"dst:t\", cursor: id}\n", u)
		conns = fmt.Sprintf("  dst: %q\n", "file://"+dir)
	}
	path := filepath.Join(dir, "weir.yaml")
	os.WriteFile(path, []byte("version: 1\nconnections:\n"+conns+"tasks:\n"+task), 0o644)
	return path
}

// TestDocSecretsHidden_Reports: transfers and reads that run carry the
// URLs, redacted, in their reports' source and destination fields. The
// lake's URL holds every Iceberg secret parameter of docs/ (an embedded
// catalog ignores them); the PostgreSQL URL a password (the test server
// trusts 127.0.0.1, so any password logs in).
func TestDocSecretsHidden_Reports(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "t.csv"), []byte("id,name\n1,a\n2,b\n"), 0o644)
	m := redacttest.Marker
	lake := "iceberg://?catalog=sql&uri=sqlite://" + dir + "/c.db&warehouse=file://" + dir + "/lake" +
		"&credential=id:" + m + "&token=" + m + "&s3.access-key-id=" + m + "&s3.secret-access-key=" + m + "&s3.session-token=" + m
	runs := [][]string{
		{"transfer", "file://" + dir, lake, "--table", "t.csv", "--dest-table", "bronze.t", "--json"},
		{"read", lake, "--table", "bronze.t", "--to", filepath.Join(dir, "out.csv"), "--json"},
	}
	if pg := os.Getenv("WEIR_TEST_PG"); pg != "" {
		pgURL := strings.Replace(pg, "postgres://root@", "postgres://root:"+m+"@", 1)
		runs = append(runs,
			[]string{"transfer", lake, pgURL, "--table", "bronze.t", "--dest-table", "public.weir_redact_t", "--json"},
			[]string{"read", pgURL, "--table", "public.weir_redact_t", "--to", filepath.Join(dir, "pg.csv"), "--json"})
	}
	for _, args := range runs {
		out, printed := runCmdPrinted(t, args...)
		if printed != "" || !strings.Contains(out, `"source"`) {
			t.Fatalf("weir %s: %s\n%s", args[0], printed, out)
		}
		if strings.Contains(out, m) || !strings.Contains(out, "xxxxx") {
			t.Errorf("weir %s --json shows a secret (or hides none):\n%s", strings.Join(args, " "), out)
		}
	}
}
