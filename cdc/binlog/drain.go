package binlog

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// stallTimeout bounds the wait for one event: the drain's target was
// already written when the run connected, so a silent stream is broken.
const stallTimeout = 30 * time.Second

// drain streams the binlog from from to to and folds every row change of
// the captured tables into w.
func (r *run) drain(ctx context.Context, from, to Position, w *cdc.Window) error {
	syncer := replication.NewBinlogSyncer(r.syncerConfig())
	defer syncer.Close()
	stream, err := syncer.StartSync(mysql.Position{Name: from.File, Pos: from.Pos})
	if err != nil {
		return fmt.Errorf("start binlog stream: %w", err)
	}
	d := newDecoder(r.tables, r.cfg.SourceURL)
	d.tx = from.logText()
	file := from.File
	for {
		ectx, cancel := context.WithTimeout(ctx, stallTimeout)
		ev, err := stream.GetEvent(ectx)
		cancel()
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("no binlog event for %s at %s:%d before the target", stallTimeout, file, d.pos)
			}
			return err
		}
		if rot, ok := ev.Event.(*replication.RotateEvent); ok {
			file = string(rot.NextLogName)
			continue
		}
		d.pos = ev.Header.LogPos
		if err := d.event(ev, Position{File: file, Pos: ev.Header.LogPos}, w); err != nil {
			return err
		}
		if endsTx(ev) {
			d.tx = Position{File: file, Pos: ev.Header.LogPos}.logText()
		}
		if ev.Header.LogPos > 0 && !(Position{File: file, Pos: ev.Header.LogPos}).Before(to) {
			return nil
		}
	}
}

// dumpSessionHook, when a test sets it, runs first on the binlog dump
// connection, before weir's own settings: a test sets a short server
// default there (net_write_timeout) as a server's configuration would.
var dumpSessionHook func(c *client.Conn) error

// dumpWriteTimeout is how long the server waits for weir to read the
// binlog stream (the dump session's net_write_timeout): while a chunk is
// applied the syncer's cache is full and weir reads nothing, and with the
// server's default (60 s) a slow apply lost the stream, every run the same
// way. A dead weir still ends the dump at once (its socket closes).
const dumpWriteTimeout = time.Hour

// dumpSession prepares the binlog dump connection.
func dumpSession(c *client.Conn) error {
	if dumpSessionHook != nil {
		if err := dumpSessionHook(c); err != nil {
			return err
		}
	}
	if _, err := c.Execute(fmt.Sprintf("SET SESSION net_write_timeout = %d", int(dumpWriteTimeout.Seconds()))); err != nil {
		return fmt.Errorf("binlog dump session: %w", err)
	}
	return nil
}

// eventCache is how many parsed events the syncer may hold ahead of the
// fold.
const eventCache = 256

func (r *run) syncerConfig() replication.BinlogSyncerConfig {
	nu := r.url.URL()
	port, _ := strconv.Atoi(nu.Port())
	if port == 0 {
		port = 3306
	}
	pass, _ := nu.User.Password()
	var id [4]byte
	rand.Read(id[:])
	return replication.BinlogSyncerConfig{
		// A replica id of its own per run, far from real replicas' ids.
		ServerID:                1<<30 | binary.BigEndian.Uint32(id[:])>>2,
		Flavor:                  r.srv.flavor(),
		Host:                    nu.Hostname(),
		Port:                    uint16(port),
		User:                    nu.User.Username(),
		Password:                pass,
		TimestampStringLocation: time.UTC,
		DisableRetrySync:        true,
		// The syncer parses ahead into a channel of this many events while
		// a chunk is applied: with go-mysql's default (10240 row events of
		// up to 8 KB, parsed) a 1M-change run held 584 MiB, 70 MiB with
		// 256 (bench/cdc.sh, 5 columns).
		EventCacheCount:     eventCache,
		Option:              dumpSession,
		Logger:              slog.New(slog.DiscardHandler),
		RowsEventDecodeFunc: rawRows, // the images are decoded by the fold (rows.go)
	}
}

// decoder turns row and query events into cdc changes.
type decoder struct {
	sourceURL string                // its read options (zero_dates, time)
	tables    map[string]*cdc.Table // by "schema.name"
	// layouts holds each table's latest table map and its layout: a
	// binlog carries a new table map per transaction, usually the same.
	layouts map[*cdc.Table]*layout
	pos     uint32
	// tx is where the current transaction starts (the end of the one
	// before), as logText: every change of a transaction carries it as its
	// Position, which makes it the transaction's id and order in a changelog.
	tx string
	// lastMap is the last rows event's table map, last its table (table).
	lastMap *replication.TableMapEvent
	last    *cdc.Table
}

// endsTx reports events after which a new transaction starts: the commit
// (XID, or a COMMIT query for non-transactional tables) and any query other
// than BEGIN (DDL and TRUNCATE are transactions of their own).
func endsTx(ev *replication.BinlogEvent) bool {
	switch e := ev.Event.(type) {
	case *replication.XIDEvent:
		return true
	case *replication.QueryEvent:
		return !strings.EqualFold(strings.TrimSpace(string(e.Query)), "BEGIN")
	}
	return false
}

func newDecoder(tables []*cdc.Table, sourceURL string) *decoder {
	d := &decoder{sourceURL: sourceURL, tables: map[string]*cdc.Table{}, layouts: map[*cdc.Table]*layout{}}
	for _, t := range tables {
		d.tables[t.Source.Schema+"."+t.Source.Name] = t
	}
	return d
}

func (d *decoder) event(ev *replication.BinlogEvent, at Position, w *cdc.Window) error {
	commit := time.Unix(int64(ev.Header.Timestamp), 0).UTC()
	switch e := ev.Event.(type) {
	case *replication.RowsEvent:
		op, ok := rowsOp(ev.Header.EventType)
		if !ok {
			return nil
		}
		return d.rows(e, ev.Header.EventType, cdc.Change{Op: op, Position: d.tx, Commit: commit}, w)
	case *replication.QueryEvent:
		return d.query(e, cdc.Change{Op: cdc.OpTruncate, Position: d.tx, Commit: commit}, w, at)
	}
	return nil
}

func rowsOp(t replication.EventType) (cdc.Op, bool) {
	switch t {
	case replication.WRITE_ROWS_EVENTv0, replication.WRITE_ROWS_EVENTv1, replication.WRITE_ROWS_EVENTv2, replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1:
		return cdc.OpInsert, true
	case replication.UPDATE_ROWS_EVENTv0, replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2, replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1:
		return cdc.OpUpdate, true
	case replication.DELETE_ROWS_EVENTv0, replication.DELETE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv2, replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1:
		return cdc.OpDelete, true
	}
	return 0, false
}

// rows folds one rows event: inserts and deletes carry one image per row,
// updates a before and an after image.
func (d *decoder) rows(e *replication.RowsEvent, typ replication.EventType, base cdc.Change, w *cdc.Window) error {
	t := d.table(e.Table)
	if t == nil {
		return nil
	}
	if !fullImages(e) {
		return &routes.ProbeError{Table: t.Source.String(),
			Problem: fmt.Sprintf("the rows event at %d carries part of each row only: a session wrote it with binlog_row_image=MINIMAL or NOBLOB (a session variable, whatever the server's global says), and the columns it leaves out cannot be applied", d.pos),
			Hint:    "make every session that writes the table use binlog_row_image=FULL, then weir reset the task and run it again (a new bootstrap)"}
	}
	l, err := d.layout(t, e.Table)
	if err != nil {
		return err
	}
	op := base.Op
	add := func(first, after []any) error {
		c := base
		switch op {
		case cdc.OpInsert:
			c.After = first
		case cdc.OpUpdate:
			c.Before, c.After, c.Key = first, after, l.keyOf(first)
		case cdc.OpDelete:
			c.Before, c.Key = first, l.keyOf(first)
		}
		return w.Add(t, c)
	}
	update := op == cdc.OpUpdate
	p, raw := pendingOf(e)
	if raw && l.fast != nil && !compressed(typ) && e.ColumnCount == uint64(len(l.fast)) && (!update || len(e.ColumnBitmap2) > 0) {
		return l.fastRows(e, p, update, add) // a refused value's error as the bulk read's, bare
	}
	if raw {
		if err := l.slowRows(e, p); err != nil {
			return fmt.Errorf("rows event of %s at %d: %w", t.Source, d.pos, err)
		}
	}
	step := 1
	if update {
		step = 2
	}
	for i := 0; i+step <= len(e.Rows); i += step {
		first, err := l.row(e.Rows[i])
		if err != nil {
			return err
		}
		var after []any
		if update {
			if after, err = l.row(e.Rows[i+1]); err != nil {
				return err
			}
		}
		if err := add(first, after); err != nil {
			return err
		}
	}
	return nil
}

// table is the captured table a table map is of, or nil; the last one is
// kept (the name is looked up once per table map, not per event).
func (d *decoder) table(tm *replication.TableMapEvent) *cdc.Table {
	if tm != d.lastMap {
		d.lastMap, d.last = tm, d.tables[string(tm.Schema)+"."+string(tm.Table)]
	}
	return d.last
}

func (l *layout) keyOf(row []any) []any {
	key := l.slabs.row(len(l.t.Key))
	for i, k := range l.t.Key {
		key[i] = row[k]
	}
	return key
}

// gap is what a statement may have around its words: spaces and comments
// (a client's leading comment is logged with the statement).
const gap = `(?:\s+|/\*.*?\*/|--[^\n]*(?:\n|$)|#[^\n]*(?:\n|$))*`

var (
	truncateRE = regexp.MustCompile(`(?is)^` + gap + `truncate\s+(?:table\s+)?([^\s;]+)` + gap + `;?` + gap + `$`)
	// every statement that changes or replaces a table's schema: MariaDB's
	// ALTER ONLINE / IGNORE and CREATE OR REPLACE included
	ddlRE = regexp.MustCompile(`(?is)^` + gap + `(?:alter(?:\s+online)?(?:\s+ignore)?|drop|rename|create\s+or\s+replace)\s+table\s+(?:if\s+(?:not\s+)?exists\s+)?([^\s;,(]+)`)
)

// query folds a TRUNCATE of a captured table; an ALTER, DROP, RENAME or
// CREATE OR REPLACE of one stops the run (schema changes are not followed).
func (d *decoder) query(e *replication.QueryEvent, c cdc.Change, w *cdc.Window, at Position) error {
	q := string(e.Query)
	if m := truncateRE.FindStringSubmatch(q); m != nil {
		if t := d.tables[qualify(m[1], string(e.Schema))]; t != nil {
			return w.Add(t, c)
		}
		return nil
	}
	if m := ddlRE.FindStringSubmatch(q); m != nil {
		if t := d.tables[qualify(m[1], string(e.Schema))]; t != nil {
			return fmt.Errorf("%s changed its schema at %s (%q): not followed; update %s and re-bootstrap (weir reset)", t.Source, at, firstLine(q), t.Dest)
		}
	}
	return nil
}

// qualify turns `db`.`t`, db.t or t (in the event's default schema) into
// "db.t".
func qualify(name, schema string) string {
	name = strings.ReplaceAll(name, "`", "")
	if strings.Contains(name, ".") {
		return name
	}
	return schema + "." + name
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// fullImages reports whether e's images carry every column (its column
// bitmaps, the after image's too for an update). binlog_row_image is a
// session variable: a session with MINIMAL logs an update as its key and
// its changed columns, NOBLOB leaves out unchanged blobs and texts, and
// applying such an image as a whole row nulled the columns it left out
// (a TEXT column landed NULL, exit 0).
func fullImages(e *replication.RowsEvent) bool {
	for _, bm := range [][]byte{e.ColumnBitmap1, e.ColumnBitmap2} {
		if bm == nil {
			continue
		}
		for i := range int(e.ColumnCount) {
			if i/8 >= len(bm) || bm[i/8]&(1<<(i%8)) == 0 {
				return false
			}
		}
	}
	return true
}
