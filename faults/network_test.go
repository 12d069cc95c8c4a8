package faults_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// password is put in every URL of these cases: it must never be printed.
const password = "s3cr3t-fault-pw"

// netRows makes the source big enough (about 1 MiB of COPY) that a cut
// after 200 KiB is mid-copy.
const (
	netRows  = 20000
	cutAfter = 200 << 10
)

// throughProxy rewrites a PostgreSQL URL to go through p, with a password.
func throughProxy(t *testing.T, raw string, p *proxy) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.Addr()
	u.User = url.UserPassword(u.User.Username(), password)
	return u.String()
}

// TestFault_Network breaks the connection to the source or to the
// destination during a run: the run fails with one clear error naming the
// endpoint (never the password), the destination keeps its previous table,
// and the next run succeeds.
func TestFault_Network(t *testing.T) {
	t.Parallel()
	src, dst := postgrestest.New(t), postgrestest.New(t)
	ctx := routestest.Context(t, 4*time.Minute)
	tests := []struct {
		name        string
		srcP        bool // the proxy sits before the source (else the destination)
		setup       func(p *proxy)
		phase       string         // pause here, then breakDuring, then go on
		breakDuring func(p *proxy) // what happens while the run is paused
	}{
		{name: "source cut mid-copy", srcP: true, setup: func(p *proxy) { p.set(false, cutAfter, 0) }},
		{name: "destination cut mid-copy", setup: func(p *proxy) { p.set(false, 0, cutAfter) }},
		{name: "destination restarts before the commit", phase: "before-commit",
			breakDuring: func(p *proxy) { p.set(true, 0, 0); p.cutAll() }},
	}
	for _, tc := range tests {
		runCase(t, tc.name, func(t *testing.T) {
			tbl := routestest.Name("n")
			src.Create(t, ctx, tbl, routestest.Rows(1, netRows))
			srcURL, dstURL := src.URL(), dst.URL()
			var p *proxy
			if tc.srcP {
				p = newProxy(t, hostOf(t, srcURL))
				srcURL = throughProxy(t, srcURL, p)
			} else {
				p = newProxy(t, hostOf(t, dstURL))
				dstURL = throughProxy(t, dstURL, p)
			}
			args := []string{"transfer", srcURL, dstURL, "--table", src.Ref(tbl), "--dest-table", dst.Ref(tbl), "--parallel", "2", "--chunk-bytes", "65536"}
			mustWeir(ctx, t, args...)
			src.Exec(t, ctx, fmt.Sprintf("DELETE FROM %s WHERE id %% 3 = 0", src.Ref(tbl)))
			before, _ := dst.Hash(t, ctx, dst.Ref(tbl), "x.id")
			var r result
			if tc.phase == "" {
				tc.setup(p)
				r = weir(ctx, t, nil, args...)
			} else {
				run := startPaused(ctx, t, tc.phase, args...)
				tc.breakDuring(p)
				r = run.goOn(t)
			}
			expectClearFailure(t, r, p.Addr())
			if got, _ := dst.Hash(t, ctx, dst.Ref(tbl), "x.id"); got != before {
				t.Fatal("the destination changed after a failed run")
			}
			p.set(false, 0, 0) // the network is back
			mustWeir(ctx, t, args...)
			expectSameTable(t, ctx, src, dst, tbl)
		})
	}
}

// TestFault_StatementTimeout: the source cancels a slow COPY
// (statement_timeout in the source URL); the run fails cleanly and a run
// with room for the statement succeeds.
func TestFault_StatementTimeout(t *testing.T) {
	t.Parallel()
	src, dst := postgrestest.New(t), postgrestest.New(t)
	ctx := routestest.Context(t, 2*time.Minute)
	runCase(t, "source statement_timeout mid-copy", func(t *testing.T) {
		tbl := routestest.Name("st")
		src.Create(t, ctx, tbl, routestest.Rows(1, 3000))
		// A view whose row 2000 takes 2 s: the COPY is mid-stream when
		// the 1 s timeout cancels it.
		src.Exec(t, ctx, fmt.Sprintf(`CREATE VIEW %s AS SELECT x.* FROM %s x, LATERAL (SELECT pg_sleep(CASE WHEN x.id = 2000 THEN 2 ELSE 0 END)) z`,
			src.Ref(tbl+"_v"), src.Ref(tbl)))
		args := func(timeout string) []string {
			return []string{"transfer", src.URL() + "&statement_timeout=" + timeout, dst.URL(), "--table", src.Ref(tbl + "_v"),
				"--dest-table", dst.Ref(tbl), "--chunk-bytes", "16384"}
		}
		r := weir(ctx, t, nil, args("1000")...)
		expectClearFailure(t, r, "statement timeout")
		if left := staging(t, ctx, dst, tbl); len(left) > 0 {
			t.Fatalf("staging left after the failed run: %v", left)
		}
		mustWeir(ctx, t, args("10000")...)
		expectSameTable(t, ctx, src, dst, tbl)
	})
}

// expectClearFailure wants exit 1 and one error line that says want and
// does not print the password.
func expectClearFailure(t *testing.T, r result, want string) {
	t.Helper()
	if r.code != 1 {
		t.Fatalf("want exit 1, got %s", r)
	}
	line := errorLine(r.stderr)
	if !strings.Contains(line, want) {
		t.Errorf("the error %q does not name %s", line, want)
	}
	if strings.Contains(r.stderr+r.stdout, password) {
		t.Errorf("the output prints the password:\n%s", r.stderr)
	}
}

// errorLine is weir's error: the last line of stderr, "weir: …".
func errorLine(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	return lines[len(lines)-1]
}

func hostOf(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func expectSameTable(t *testing.T, ctx context.Context, src, dst *postgrestest.Fixture, tbl string) {
	t.Helper()
	want, n := tableHash(t, ctx, src, tbl)
	if got, m := tableHash(t, ctx, dst, tbl); got != want {
		t.Fatalf("destination (%d rows) differs from the source (%d rows)", m, n)
	}
	if left := staging(t, ctx, dst, tbl); len(left) > 0 {
		t.Fatalf("staging left: %v", left)
	}
}

func staging(t *testing.T, ctx context.Context, f *postgrestest.Fixture, tbl string) []string {
	return f.Staging(t, ctx, tbl)
}
