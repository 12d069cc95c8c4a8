package iceberg

import (
	"context"
	"database/sql"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
)

// TestHolderDead: only a holder of this machine, boot and PID namespace
// whose process is gone (reaped, or its PID reused) is dead; a live
// process, this one, a holder of another machine and an unreadable holder
// are not known to be dead.
func TestHolderDead(t *testing.T) {
	me := self()
	if me.boot == "" {
		t.Skip("no /proc: holders are not recorded here, only the TTL frees a lease")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	live := me
	live.pid = cmd.Process.Pid
	var ok bool
	if live.start, ok = startTime(live.pid); !ok {
		t.Fatal("no start time for a running child")
	}
	if holderDead(live.String()) {
		t.Fatal("a running process is dead")
	}
	cmd.Process.Kill()
	cmd.Wait()
	reused := me
	reused.start = me.start + "0" // this PID, another start: a reused PID
	other := me
	other.host = me.host + "x"
	other.pid = live.pid
	for _, c := range []struct {
		name   string
		holder string
		dead   bool
	}{
		{"killed and reaped", live.String(), true},
		{"this process", me.String(), false},
		{"this PID reused", reused.String(), true},
		{"another machine", other.String(), false},
		{"no holder", "", false},
		{"garbage", "a b c", false},
		{"bad pid", me.host + " " + me.boot + " " + me.pidns + " -1 1", false},
		{"pid 1", me.host + " " + me.boot + " " + me.pidns + " 1 " + strconv.Itoa(1<<30), true},
	} {
		if got := holderDead(c.holder); got != c.dead {
			t.Errorf("%s (%q): dead = %v, want %v", c.name, c.holder, got, c.dead)
		}
	}
}

// TestRowLock_OldTableAndDeadHolder: a weir_locks table made before the
// holder column gets it; a lease whose holder is dead is taken over at
// once, a live holder's lease (another run of this process) is refused.
func TestRowLock_OldTableAndDeadHolder(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE ` + LockTable + ` (table_key VARCHAR(1024) NOT NULL PRIMARY KEY,
  run_id VARCHAR(255) NOT NULL, since_ms BIGINT NOT NULL, expires_ms BIGINT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	ref := routes.TableRef{Schema: "s", Name: "t"}
	// A lease of the old shape (no holder): only its TTL frees it.
	if _, err := db.Exec(`INSERT INTO `+LockTable+` VALUES (?, 'old', 0, ?)`, lockKey(ref), time.Now().Add(time.Hour).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	l, err := newRowLock(ctx, db, "sqlite", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.acquire(ctx, ref, "a"); !errors.Is(err, routes.ErrLocked) {
		t.Fatalf("a lease with no holder: %v, want ErrLocked", err)
	}
	if self().boot == "" {
		return
	}
	dead := self()
	dead.start += "0"
	if _, err := db.Exec(`UPDATE `+LockTable+` SET holder = ?`, dead.String()); err != nil {
		t.Fatal(err)
	}
	a, err := l.acquire(ctx, ref, "a")
	if err != nil {
		t.Fatalf("a dead holder's lease was not taken over: %v", err)
	}
	defer a.release(ctx)
	if _, err := l.acquire(ctx, ref, "b"); !errors.Is(err, routes.ErrLocked) {
		t.Fatalf("a live holder's lease: %v, want ErrLocked", err)
	}
}
