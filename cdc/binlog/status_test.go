package binlog

import (
	"strings"
	"testing"
)

// TestLogFiles_Between: the bytes from a position to the head, within one
// file and across rotations.
func TestLogFiles_Between(t *testing.T) {
	logs := logFiles{{"b.000001", 1000}, {"b.000002", 500}, {"b.000003", 300}}
	p := func(f string, pos uint32) Position { return Position{File: f, Pos: pos} }
	tests := []struct {
		from, head Position
		want       int64
		ok         bool
	}{
		{p("b.000002", 100), p("b.000002", 400), 300, true},
		{p("b.000001", 900), p("b.000003", 200), 100 + 500 + 200, true},
		{p("b.000000", 4), p("b.000003", 200), 0, false},
	}
	for _, tt := range tests {
		if got, ok := logs.between(tt.from, tt.head); got != tt.want || ok != tt.ok {
			t.Errorf("between(%s, %s) = %d, %v; want %d, %v", tt.from, tt.head, got, ok, tt.want, tt.ok)
		}
	}
}

// TestStatus: the bytes of binlog behind grow with writes (across a
// rotation) and the position moves after a run; a saved file the server no longer has
// is reported as lost with the fix.
func TestStatus(t *testing.T) {
	e := setup(t, "mysql")
	lag, err := Status(e.ctx, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if lag.Position != "" || lag.Known || lag.Lost || lag.Head == "" {
		t.Fatalf("status before the first run = %+v, want a head and no position", lag)
	}
	e.run()
	e.exec(`FLUSH BINARY LOGS`) // the position's file is no longer the last
	for i := 0; i < 20; i++ {
		e.exec(`UPDATE ` + e.src.Table("items") + ` SET n = n + 1`)
	}
	lag, err = Status(e.ctx, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	head, err := ParsePosition(lag.Head)
	if err != nil {
		t.Fatal(err)
	}
	if !lag.Known || lag.Lost || lag.File == head.File || lag.Behind <= int64(head.Pos) {
		t.Fatalf("status after a rotation and 800 row updates = %+v, want more bytes behind than the head's offset %d", lag, head.Pos)
	}
	res := e.run()
	if lag, err = Status(e.ctx, e.cfg); err != nil {
		t.Fatal(err)
	}
	// Not "less behind than before": other writers share the server's log.
	if lag.Position != res.To || !lag.Known || lag.Behind < 0 {
		t.Errorf("status after the run = %+v, want position %s", lag, res.To)
	}
	e.dst.Exec(t, e.ctx, "UPDATE "+e.dst.Table("_weir_state")+" SET position = 'mysql-bin.000000:4'")
	if lag, err = Status(e.ctx, e.cfg); err != nil {
		t.Fatal(err)
	}
	if !lag.Lost || lag.Known || !strings.Contains(lag.Problem, "purged") || !strings.Contains(lag.Problem, "unreadable") || lag.Oldest == "" {
		t.Fatalf("status from a purged file = %+v, want lost, saying so and the oldest file", lag)
	}
}
