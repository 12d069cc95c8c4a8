package pgwal

import (
	"strings"
	"testing"
)

// TestStatus: before the first run there is no position and no slot (not
// a loss); after it, the bytes of WAL behind grow with writes and shrink
// to the run's end after a run, and the slot's retained WAL, confirmed
// position and wal_status are read; a dropped slot is reported as lost
// with the fix.
func TestStatus(t *testing.T) {
	e := setup(t)
	lag, err := Status(e.ctx, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if lag.Position != "" || lag.Known || lag.Lost || lag.Head == "" || lag.WALStatus != "" {
		t.Fatalf("status before the first run = %+v, want a head, no position, no slot, not lost", lag)
	}
	e.run()
	e.exec(`INSERT INTO ` + ident(e.src) + ` SELECT g, 'more', g, NULL FROM generate_series(100, 2100) g`)
	lag, err = Status(e.ctx, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	name, _ := e.cfg.Name()
	if !lag.Known || lag.Lost || lag.Slot != name || lag.Position == "" || lag.Behind < 2000*40 {
		t.Fatalf("status after 2001 inserts = %+v, want the slot and ≥ 80 KB of WAL behind", lag)
	}
	if lag.WALStatus != "reserved" && lag.WALStatus != "extended" {
		t.Errorf("wal_status = %q, want reserved or extended", lag.WALStatus)
	}
	if lag.Retained < lag.Behind || lag.ConfirmedBehind < lag.Behind || lag.Confirmed == "" {
		t.Errorf("status = %+v: the slot retains and confirmed at least what the position is behind", lag)
	}
	res := e.run()
	e.checkConfirmed(res.To)
	lag, err = Status(e.ctx, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Not "less behind than before": other writers share the server's log.
	if lag.Position != res.To || !lag.Known || lag.Behind < 0 || lag.ConfirmedBehind != lag.Behind {
		t.Errorf("status after the run = %+v, want position %s", lag, res.To)
	}
	if err := dropSlot(e.ctx, e.conn, name); err != nil {
		t.Fatal(err)
	}
	lag, err = Status(e.ctx, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !lag.Lost || lag.Known || !strings.Contains(lag.Problem, "does not exist") || !strings.Contains(lag.Problem, "unreadable") {
		t.Fatalf("status with the slot dropped = %+v, want lost, saying so", lag)
	}
}
