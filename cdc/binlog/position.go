package binlog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Position is a binlog coordinate: the file and offset the next event
// starts at, the server's GTID set there (MariaDB domain-server-seq list
// or MySQL uuid:interval set; empty without GTIDs) and the server_id of
// the server whose binlog it is. Runs resume from File:Pos, which only
// means something on that server: a run against another one (a failover
// to a replica, a URL changed) is refused (sameServer). The GTID set is
// kept for operators.
type Position struct {
	File   string
	Pos    uint32
	GTID   string
	Server uint32 // @@server_id; 0: not recorded (positions saved before it was)
}

// String is "mysql-bin.000003:1234", with " gtid=0-1-42" and " server=1"
// when known: the text saved in _weir_state.position.
func (p Position) String() string {
	s := fmt.Sprintf("%s:%d", p.File, p.Pos)
	if p.GTID != "" {
		s += " gtid=" + p.GTID
	}
	if p.Server != 0 {
		s += " server=" + strconv.FormatUint(uint64(p.Server), 10)
	}
	return s
}

// logText is the coordinate as a changelog's _weir_lsn: the offset
// zero-padded to 10 digits, so text order is log order (binlog file names
// carry a zero-padded sequence number).
func (p Position) logText() string { return fmt.Sprintf("%s:%010d", p.File, p.Pos) }

// ParsePosition reads what String wrote.
func ParsePosition(s string) (Position, error) {
	rest, server, _ := strings.Cut(s, " server=")
	coord, gtid, _ := strings.Cut(rest, " gtid=")
	i := strings.LastIndexByte(coord, ':')
	if i <= 0 {
		return Position{}, fmt.Errorf("binlog position %q: want file:pos", s)
	}
	pos, err := strconv.ParseUint(coord[i+1:], 10, 32)
	if err != nil {
		return Position{}, fmt.Errorf("binlog position %q: %w", s, err)
	}
	p := Position{File: coord[:i], Pos: uint32(pos), GTID: gtid}
	if server != "" {
		id, err := strconv.ParseUint(server, 10, 32)
		if err != nil {
			return Position{}, fmt.Errorf("binlog position %q: server: %w", s, err)
		}
		p.Server = uint32(id)
	}
	return p, nil
}

// Before reports whether p comes before q in the log (binlog file names
// share a base name and a zero-padded sequence number).
func (p Position) Before(q Position) bool {
	if p.File != q.File {
		return p.File < q.File
	}
	return p.Pos < q.Pos
}

// server is what the run needs to know about the source server.
type server struct {
	mariadb bool
	version string
}

func (s server) flavor() string {
	if s.mariadb {
		return "mariadb"
	}
	return "mysql"
}

func readServer(ctx context.Context, db *sql.DB) (server, error) {
	var v string
	if err := db.QueryRowContext(ctx, `SELECT VERSION()`).Scan(&v); err != nil {
		return server{}, fmt.Errorf("read server version: %w", err)
	}
	return server{mariadb: strings.Contains(strings.ToLower(v), "mariadb"), version: v}, nil
}

// current reads the end of the binlog now: SHOW MASTER STATUS (SHOW BINARY
// LOG STATUS on MySQL 8.4+) and the GTID set (@@gtid_binlog_pos on MariaDB,
// @@gtid_executed on MySQL).
func (s server) current(ctx context.Context, db *sql.DB) (Position, error) {
	var p Position
	rows, err := db.QueryContext(ctx, `SHOW MASTER STATUS`)
	if err != nil {
		rows, err = db.QueryContext(ctx, `SHOW BINARY LOG STATUS`)
	}
	if err != nil {
		return p, fmt.Errorf("read binlog status: %w", err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !rows.Next() {
		return p, errors.New("the server writes no binary log: set log_bin (and server_id) and restart it")
	}
	vals := make([]any, len(cols))
	vals[0], vals[1] = &p.File, &p.Pos
	for i := 2; i < len(vals); i++ {
		vals[i] = new(sql.RawBytes)
	}
	if err := rows.Scan(vals...); err != nil {
		return p, fmt.Errorf("read binlog status: %w", err)
	}
	rows.Close()
	q := `SELECT @@gtid_executed`
	if s.mariadb {
		q = `SELECT @@gtid_binlog_pos`
	}
	var gtid sql.NullString
	if err := db.QueryRowContext(ctx, q).Scan(&gtid); err == nil {
		p.GTID = strings.ReplaceAll(gtid.String, "\n", "")
	}
	if err := db.QueryRowContext(ctx, `SELECT @@server_id`).Scan(&p.Server); err != nil {
		return p, fmt.Errorf("read server_id: %w", err)
	}
	return p, nil
}

// sameServer fails with a *PositionLostError when the saved position was
// read from another server than head (both server_ids known): binlog file
// names and offsets are the server's own, so resuming from them on a
// replica promoted after a failover would read another log, or fail.
func sameServer(saved, head Position) error {
	if saved.Server == 0 || head.Server == 0 || saved.Server == head.Server {
		return nil
	}
	return &PositionLostError{Position: saved, Server: head.Server}
}

// ErrPositionLost: the binlog file the saved position is in was purged
// (expire_logs_days, binlog_expire_logs_seconds, PURGE BINARY LOGS), or
// the position belongs to another server's binlog. The changes since
// cannot be read any more; the fix is a new bootstrap.
var ErrPositionLost = errors.New("binlog position lost")

// PositionLostError names the position and the fix.
type PositionLostError struct {
	Position Position
	Oldest   string // the oldest binlog file the server still has
	// Server, when set, is the server_id of the server connected to,
	// which is not the one the position was saved from (sameServer).
	Server uint32
}

func (e *PositionLostError) Error() string {
	return e.Loss() + ": re-bootstrap with `weir reset` (drops the state) and run again"
}

// Loss says what was lost, without the fix (weir status names the task's).
func (e *PositionLostError) Loss() string {
	if e.Server != 0 {
		return fmt.Sprintf("the saved position %s is in the binlog of server_id %d, and the source is now server_id %d (a failover, or a URL that points elsewhere): its binlog coordinates mean nothing here",
			e.Position, e.Position.Server, e.Server)
	}
	return fmt.Sprintf("binlog file %s of the saved position %s was purged (the oldest is %s); changes after it are unreadable",
		e.Position.File, e.Position, e.Oldest)
}

// Is makes errors.Is(err, ErrPositionLost) true.
func (e *PositionLostError) Is(target error) bool { return target == ErrPositionLost }

// checkRetained fails with a *PositionLostError when the server no longer
// has the binlog file p is in.
func checkRetained(ctx context.Context, db *sql.DB, p Position) error {
	logs, err := binaryLogs(ctx, db)
	if err != nil {
		return err
	}
	return logs.retains(p)
}

// logFile is one row of SHOW BINARY LOGS.
type logFile struct {
	name string
	size int64
}

type logFiles []logFile

// binaryLogs lists the server's binlog files, oldest first, with their
// sizes.
func binaryLogs(ctx context.Context, db *sql.DB) (logFiles, error) {
	rows, err := db.QueryContext(ctx, `SHOW BINARY LOGS`)
	if err != nil {
		return nil, fmt.Errorf("list binary logs: %w", err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out logFiles
	for rows.Next() {
		var f logFile
		vals := []any{&f.name, &f.size} // MySQL 8 adds Encrypted
		for range cols[2:] {
			vals = append(vals, new(sql.RawBytes))
		}
		if err := rows.Scan(vals...); err != nil {
			return nil, fmt.Errorf("list binary logs: %w", err)
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list binary logs: %w", err)
	}
	return out, nil
}

func (l logFiles) oldest() string {
	if len(l) == 0 {
		return ""
	}
	return l[0].name
}

// retains fails with a *PositionLostError when p's file is not listed.
func (l logFiles) retains(p Position) error {
	for _, f := range l {
		if f.name == p.File {
			return nil
		}
	}
	return &PositionLostError{Position: p, Oldest: l.oldest()}
}

// between is the bytes of binlog from p to head: the rest of p's file, the
// files after it, and head's offset into its own. ok is false when p's
// file is not listed.
func (l logFiles) between(p, head Position) (n int64, ok bool) {
	if p.File == head.File {
		return max(int64(head.Pos)-int64(p.Pos), 0), true
	}
	in := false
	for _, f := range l {
		switch {
		case f.name == p.File:
			in, n = true, max(f.size-int64(p.Pos), 0)
		case f.name == head.File:
			if !in {
				return 0, false
			}
			return n + int64(head.Pos), true
		case in:
			n += f.size
		}
	}
	return 0, false
}
