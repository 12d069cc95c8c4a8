package pgwal

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/weirhq/weir/routes"
)

// withParam adds a query parameter to a URL.
func withParam(raw, key, value string) string {
	sep := "?"
	if strings.Contains(raw, "?") {
		sep = "&"
	}
	return raw + sep + key + "=" + strings.ReplaceAll(url.PathEscape(value), "=", "%3D")
}

// TestRun_SlowApplyKeepsConnection: chunks whose apply takes longer than
// the server's wal_sender_timeout (1 s here, for this test's replication
// connection only) do not lose the replication connection while the
// server waits to send more (wide rows: more than the sockets buffer): the
// stream reports its status while the run applies, commits, and the next
// run drains from there. Before, the server ended the connection
// (unexpected EOF) and every run failed the same way.
func TestRun_SlowApplyKeepsConnection(t *testing.T) {
	old := keepaliveEvery
	keepaliveEvery = 200 * time.Millisecond
	t.Cleanup(func() { keepaliveEvery = old })
	for _, changelog := range []bool{false, true} {
		t.Run(fmt.Sprintf("changelog %v", changelog), func(t *testing.T) {
			e := setup(t)
			e.cfg.Changelog = changelog
			e.cfg.SourceURL = withParam(e.cfg.SourceURL, "options", "-c wal_sender_timeout=1s")
			e.run() // bootstrap
			setFlush(t, 10)
			// 30 MB of changes: more than the sockets buffer, so the server
			// waits to send while the run applies
			e.exec(`INSERT INTO ` + ident(e.src) + ` SELECT g, 'new ' || g, g, repeat(md5(g::text), 32768) FROM generate_series(100, 129) g`)
			e.exec(`UPDATE ` + ident(e.src) + ` SET n = -n WHERE id <= 10`)
			slow := 0
			routes.SetCheckpointHook(func(stage string) error {
				if stage == "apply-after-truncate" || stage == "apply-after-append" { // every chunk
					slow++
					time.Sleep(2 * time.Second)
				}
				return nil
			})
			t.Cleanup(func() { routes.SetCheckpointHook(nil) })
			res := e.run()
			routes.SetCheckpointHook(nil)
			if slow < 3 || res.Changes != 40 {
				t.Fatalf("run = %+v with %d slow chunks, want 40 changes in at least 3", res, slow)
			}
			if !changelog {
				e.assertEqual("after a slow apply")
			}
			// The slot was told: the WAL before the run's end may go.
			name, _ := e.cfg.Name()
			to, _ := pglogrepl.ParseLSN(res.To)
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				var confirmed string
				if err := e.conn.QueryRow(e.ctx, `SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1`, name).Scan(&confirmed); err != nil {
					t.Fatal(err)
				}
				if lsn, _ := pglogrepl.ParseLSN(confirmed); lsn >= to {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("slot confirmed %s after the run committed %s: the confirm was lost", confirmed, res.To)
				}
			}
			// The slot was confirmed: the next run starts where this one ended.
			e.exec(`UPDATE ` + ident(e.src) + ` SET name = 'after' WHERE id = 100`)
			if res2 := e.run(); res2.From != res.To || res2.Changes != 1 {
				t.Fatalf("next run = %+v, want 1 change from %s", res2, res.To)
			}
		})
	}
}

// TestRun_FailedBootstrapDropsSlot: a bootstrap that fails after it
// created the slot and the publication drops both (a slot left behind
// keeps WAL for a run that may never come), but not a publication it did
// not create.
func TestRun_FailedBootstrapDropsSlot(t *testing.T) {
	for _, pubBefore := range []bool{false, true} {
		t.Run(fmt.Sprintf("publication before %v", pubBefore), func(t *testing.T) {
			e := setup(t)
			name, _ := e.cfg.Name()
			if pubBefore {
				e.exec(`CREATE PUBLICATION ` + quoteIdent(name) + ` FOR TABLE ` + ident(e.src))
			}
			setFailpoint(t, func(stage string) error {
				if stage == "bootstrap-copy" {
					return errors.New("injected failure")
				}
				return nil
			})
			if _, err := Run(e.ctx, e.cfg); err == nil || !strings.Contains(err.Error(), "injected failure") {
				t.Fatalf("bootstrap with an injected failure = %v, want it", err)
			}
			var slots, pubs int
			if err := e.conn.QueryRow(e.ctx, `SELECT (SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1),
				(SELECT count(*) FROM pg_publication WHERE pubname = $1)`, name).Scan(&slots, &pubs); err != nil {
				t.Fatal(err)
			}
			wantPubs := 0
			if pubBefore {
				wantPubs = 1
			}
			if slots != 0 || pubs != wantPubs {
				t.Fatalf("after a failed bootstrap: %d slots, %d publications named %s, want 0 and %d", slots, pubs, name, wantPubs)
			}
		})
	}
}

// TestRun_SlotWAL: every run reports the WAL its slot retains and warns
// above the threshold (SlotWALWarn), Status too; the bootstrap warns when
// max_slot_wal_keep_size is unlimited; weir reset (Drop) drops the slot
// and the publication, which retires the task.
func TestRun_SlotWAL(t *testing.T) {
	e := setup(t)
	var keep string
	if err := e.conn.QueryRow(e.ctx, `SELECT setting FROM pg_settings WHERE name = 'max_slot_wal_keep_size'`).Scan(&keep); err != nil {
		t.Fatal(err)
	}
	res := e.run()
	hasWarning := func(ws []string, s string) bool {
		return slices.ContainsFunc(ws, func(w string) bool { return strings.Contains(w, s) })
	}
	if got := hasWarning(res.Warnings, "max_slot_wal_keep_size is -1"); got != (keep == "-1") {
		t.Errorf("bootstrap with max_slot_wal_keep_size %s: warnings %q", keep, res.Warnings)
	}
	if res.SlotRetained <= 0 || hasWarning(res.Warnings, "retains") {
		t.Errorf("bootstrap = %+v, want the slot's retained WAL, under the default threshold", res)
	}
	name, _ := e.cfg.Name()
	e.cfg.SlotWALWarn = 1
	e.exec(`UPDATE ` + ident(e.src) + ` SET n = n + 1 WHERE id = 1`)
	res = e.run()
	if res.SlotRetained <= 1 || !hasWarning(res.Warnings, "replication slot "+name+" retains") || !hasWarning(res.Warnings, "weir reset") {
		t.Errorf("run over the threshold = %+v, want a warning naming the slot and weir reset", res)
	}
	lag, err := Status(e.ctx, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if lag.Retained <= 1 || !strings.Contains(lag.Warning, name) {
		t.Errorf("status over the threshold = %+v, want the retained WAL and a warning", lag)
	}
	e.cfg.SlotWALWarn = 1 << 50
	if lag, err = Status(e.ctx, e.cfg); err != nil || lag.Warning != "" {
		t.Errorf("status under the threshold = %+v, %v: want no warning", lag, err)
	}
	if err := Drop(e.ctx, e.cfg); err != nil {
		t.Fatal(err)
	}
	var slots, pubs int
	if err := e.conn.QueryRow(e.ctx, `SELECT (SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1),
		(SELECT count(*) FROM pg_publication WHERE pubname = $1)`, name).Scan(&slots, &pubs); err != nil {
		t.Fatal(err)
	}
	if slots != 0 || pubs != 0 {
		t.Fatalf("after weir reset: %d slots, %d publications named %s, want none", slots, pubs, name)
	}
}

// TestKeepSizeText: only an unlimited max_slot_wal_keep_size (-1, the
// default; the test server bounds it) is warned about.
func TestKeepSizeText(t *testing.T) {
	for setting, warn := range map[string]bool{"-1": true, "4096": false, "0": false} {
		if got := keepSizeText(setting); (got != "") != warn || warn && !strings.Contains(got, "ALTER SYSTEM SET max_slot_wal_keep_size") {
			t.Errorf("max_slot_wal_keep_size %s: warning %q, want one: %v", setting, got, warn)
		}
	}
}
