package binlog

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// TestRun_SlowApplyKeepsConnection: a chunk whose apply takes longer than
// the server's net_write_timeout (1 s here, set on this test's dump
// connection as a server's default would be) does not lose the binlog
// stream. While the run applies, the syncer's 256-event cache fills, weir
// stops reading the socket, and the server waits to send the rest (30 MB
// of changes: more than the cache and the sockets buffer); past
// net_write_timeout it ended the dump ("connection reset by peer") and
// every run failed the same way. weir sets the dump session's own
// net_write_timeout (dumpWriteTimeout) over the server's default.
func TestRun_SlowApplyKeepsConnection(t *testing.T) {
	dumpSessionHook = func(c *client.Conn) error {
		_, err := c.Execute("SET SESSION net_write_timeout = 1")
		return err
	}
	t.Cleanup(func() { dumpSessionHook = nil })
	for _, changelog := range []bool{false, true} {
		t.Run(fmt.Sprintf("changelog %v", changelog), func(t *testing.T) {
			e := setup(t, "postgres")
			e.cfg.Changelog = changelog
			e.run() // bootstrap
			const rows = 30000
			for lo := 1000; lo < 1000+rows; lo += 5000 {
				e.exec(fmt.Sprintf(`INSERT INTO %s (id, name, big) SELECT seq, CONCAT('new ', seq), REPEAT(MD5(seq), 32) FROM test.seq_%d_to_%d`,
					e.src.Table("items"), lo, lo+4999))
			}
			slow := 0
			restore := routes.SetCheckpointHook(func(stage string) error {
				if (stage == "apply-after-truncate" || stage == "apply-after-append") && slow == 0 { // the first chunk
					slow++
					time.Sleep(5 * time.Second)
				}
				return nil
			})
			t.Cleanup(restore)
			old := cdc.FlushChanges
			cdc.FlushChanges = 100
			t.Cleanup(func() { cdc.FlushChanges = old })
			res := e.run()
			restore()
			if slow != 1 || res.Changes != rows {
				t.Fatalf("run = %+v with %d slow chunks, want %d changes after one slow chunk", res, slow, rows)
			}
			if !changelog {
				e.assertEqual("after a slow apply")
			}
			e.exec(`UPDATE ` + e.src.Table("items") + ` SET name = 'after' WHERE id = 1000`)
			if res2 := e.run(); res2.From != res.To || res2.Changes != 1 {
				t.Fatalf("next run = %+v, want 1 change from %s", res2, res.To)
			}
		})
	}
}
