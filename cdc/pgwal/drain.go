package pgwal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// idleWait bounds one wait for a message; on expiry the drain asks the
// server for a keepalive, which reports how far it has decoded.
const idleWait = 2 * time.Second

// keepaliveEvery is how often a stream reports its status while the run
// does not read it (a chunk being applied, the commit): the server ends a
// replication connection that sends nothing for wal_sender_timeout (60 s
// by default), however long the apply takes.
var keepaliveEvery = time.Second

// stream is one drain: the replication connection and how far it got.
type stream struct {
	// mu serializes the connection's users: the drain's reads and status
	// updates, and the keepalive goroutine's status updates.
	mu       sync.Mutex
	conn     *pgconn.PgConn
	flushed  pglogrepl.LSN // confirmed to the server as flushed: the saved position, then what confirm made durable (mu)
	target   pglogrepl.LSN // the end of the WAL when the run connected
	received pglogrepl.LSN // everything before it has been decoded and sent
	dec      *decoder
	stop     func() // ends the keepalive goroutine and waits for it
}

// openStream starts replication at the saved position. It reads the end of
// the WAL first, and writes a non-transactional logical message there so the
// stream always carries a record at or past the end, even when the pair's
// tables had no changes.
func (r *run) openStream(ctx context.Context, start pglogrepl.LSN) (*stream, error) {
	if err := checkSlot(ctx, r.src, r.name, start.String()); err != nil {
		return nil, err
	}
	s := &stream{flushed: start, received: start, dec: newDecoder(r.tables, start, r.cfg.Changelog)}
	var end string
	if err := r.src.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&end); err != nil {
		return nil, fmt.Errorf("read WAL end: %w", err)
	}
	var err error
	if s.target, err = pglogrepl.ParseLSN(end); err != nil {
		return nil, fmt.Errorf("read WAL end: %w", err)
	}
	// Best effort: without the privilege the keepalives still report progress.
	r.src.Exec(ctx, `SELECT pg_logical_emit_message(false, 'weir', $1)`, r.runID)
	if s.conn, err = connectReplication(ctx, r.cfg.SourceURL); err != nil {
		return nil, fmt.Errorf("replication connection: %w", err)
	}
	err = pglogrepl.StartReplication(ctx, s.conn, r.name, start, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", fmt.Sprintf("publication_names '%s'", r.name), "messages 'true'"}})
	if err != nil {
		s.conn.Close(context.WithoutCancel(ctx))
		return nil, r.startErr(start, err)
	}
	s.keepalive(ctx)
	return s, nil
}

// readBuffer is how much of the stream one read of the socket takes: the
// messages are a few hundred bytes, and pgproto3's own 8 KiB buffer made
// the reads a sixth of a WAL run's CPU (bench/README.md, issue 25).
const readBuffer = 256 << 10

// connectReplication opens a replication connection whose reads are
// buffered by readBuffer.
func connectReplication(ctx context.Context, sourceURL string) (*pgconn.PgConn, error) {
	cfg, err := replicationConfig(sourceURL)
	if err != nil {
		return nil, err
	}
	cfg.BuildFrontend = func(r io.Reader, w io.Writer) *pgproto3.Frontend {
		return pgproto3.NewFrontend(bufio.NewReaderSize(r, readBuffer), w)
	}
	return pgconn.ConnectConfig(ctx, cfg)
}

// keepalive reports the stream's status every keepaliveEvery until stop,
// so the connection lives while the run applies or commits and reads
// nothing. A failed update is left to the drain or confirm to see.
func (s *stream) keepalive(ctx context.Context) {
	kctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	s.stop = func() { cancel(); <-done }
	go func() {
		defer close(done)
		tick := time.NewTicker(keepaliveEvery)
		defer tick.Stop()
		for {
			select {
			case <-kctx.Done():
				return
			case <-tick.C:
				if err := s.status(kctx, false); err != nil {
					debugf("keepalive: %v", err)
				}
			}
		}
	}()
}

// startErr turns "slot does not exist" into a *SlotLostError, and "slot is
// active" into a lock (exit 75: another run streams from it, or a killed
// run's server process has not ended yet).
func (r *run) startErr(start pglogrepl.LSN, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "55006" {
		return fmt.Errorf("start replication: %w (%s)", &routes.LockedError{Table: "replication slot " + r.name}, pgErr.Message)
	}
	if errors.As(err, &pgErr) && (pgErr.Code == "42704" || pgErr.Code == "55000") {
		return fmt.Errorf("start replication: %w: %s", &SlotLostError{Slot: r.name, Position: start.String(), Reason: "cannot be used"}, pgErr.Message)
	}
	return fmt.Errorf("start replication on slot %s at %s: %w", r.name, start, err)
}

// drain reads until everything up to the target has been received and no
// transaction is open, folding every change into w.
func (s *stream) drain(ctx context.Context, w *cdc.Window) error {
	// A cancelled run ends the wait at once (see receive).
	stop := context.AfterFunc(ctx, func() { s.conn.Conn().SetReadDeadline(time.Now()) })
	defer func() {
		stop()
		s.conn.Conn().SetReadDeadline(time.Time{}) // for the connection's later users
	}()
	for !(s.received >= s.target && !s.dec.inTx) {
		msg, err := s.receive(ctx)
		if err != nil {
			return err
		}
		if msg == nil {
			continue
		}
		if err := s.handle(ctx, msg, w); err != nil {
			return err
		}
	}
	return nil
}

// receive waits for one message; nil after an idle wait, having asked the
// server for a keepalive. The wait is bounded by the connection's read
// deadline, not a context per message: pgconn watches a message's context
// with a timer and a goroutine hand-off, which was a tenth of a WAL run's
// CPU (bench/README.md, issue 25).
func (s *stream) receive(ctx context.Context) (pgproto3.BackendMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("receive WAL: %w", err)
	}
	s.mu.Lock()
	s.conn.Conn().SetReadDeadline(time.Now().Add(idleWait))
	msg, err := s.conn.ReceiveMessage(context.Background())
	s.mu.Unlock()
	if err != nil && pgconn.Timeout(err) && ctx.Err() == nil {
		debugf("idle: received %s target %s inTx %v", s.received, s.target, s.dec.inTx)
		return nil, s.status(ctx, true)
	}
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("receive WAL: %w", ctx.Err())
	}
	if err != nil {
		return nil, fmt.Errorf("receive WAL: %w", err)
	}
	return msg, nil
}

func (s *stream) handle(ctx context.Context, msg pgproto3.BackendMessage, w *cdc.Window) error {
	switch m := msg.(type) {
	case *pgproto3.CopyData:
		return s.copyData(ctx, m.Data, w)
	case *pgproto3.ErrorResponse:
		return fmt.Errorf("replication stream: %w", pgconn.ErrorResponseToPgError(m))
	}
	return nil
}

func (s *stream) copyData(ctx context.Context, data []byte, w *cdc.Window) error {
	switch data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
		if err != nil {
			return fmt.Errorf("parse keepalive: %w", err)
		}
		s.advance(ka.ServerWALEnd)
		if ka.ReplyRequested {
			return s.status(ctx, false)
		}
	case pglogrepl.XLogDataByteID:
		xld, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return fmt.Errorf("parse XLogData: %w", err)
		}
		if err := s.dec.decode(xld.WALData, w); err != nil {
			return err
		}
		s.advance(xld.WALStart)
	}
	return nil
}

func (s *stream) advance(lsn pglogrepl.LSN) {
	if lsn > s.received {
		s.received = lsn
	}
}

// status reports the flushed position as written, flushed and applied:
// until confirm it is the saved position, since nothing new is confirmed
// before the destination committed.
func (s *stream) status(ctx context.Context, reply bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pos := s.flushed
	err := pglogrepl.SendStandbyStatusUpdate(ctx, s.conn, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: pos, WALFlushPosition: pos, WALApplyPosition: pos, ReplyRequested: reply})
	if err != nil {
		return fmt.Errorf("standby status update: %w", err)
	}
	return nil
}

// confirm tells the slot that everything before pos is applied, so the
// server may recycle that WAL; called only after the destination committed.
func (s *stream) confirm(ctx context.Context, pos pglogrepl.LSN) error {
	if err := routes.Checkpoint("confirm"); err != nil { // tests: committed, never confirmed
		return err
	}
	s.mu.Lock()
	s.flushed = pos
	s.mu.Unlock()
	if err := s.status(ctx, false); err != nil {
		return fmt.Errorf("confirm %s to the slot (the destination has it; the next run re-reads and skips it): %w", pos, err)
	}
	return nil
}

func (s *stream) close(ctx context.Context) {
	if s != nil && s.stop != nil {
		s.stop()
	}
	if s != nil && s.conn != nil {
		s.conn.Close(context.WithoutCancel(ctx))
	}
}

// debugf traces idle waits; tests set it (WEIR_PGWAL_TRACE).
var debugf = func(format string, args ...any) {}
