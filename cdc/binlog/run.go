package binlog

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// Result reports one run.
type Result = cdc.Result

// Pair is one captured table and where it goes.
type Pair = cdc.Pair

// Config is one (source, destination) capture.
type Config struct {
	SourceURL string // mysql://… or mariadb://…; the user needs REPLICATION SLAVE and REPLICATION CLIENT
	DestURL   string // any destination that implements cdc.Applier
	Tables    []Pair
	RunID     string // optional; routes.NewRunID() when empty
	// Changelog appends every change to the destination tables (with
	// _weir_op, _weir_lsn, …) instead of keeping replicas of them.
	Changelog bool
}

// run is one Run's connections and tables.
type run struct {
	cfg     Config
	runID   string
	url     *routes.URL
	db      *sql.DB // control: binlog status and retention
	srv     server
	source  routes.Source
	dest    routes.Destination
	applier cdc.Applier
	tables  []*cdc.Table
}

// Run bootstraps the pair on its first run and drains, folds and applies
// the binlog since the saved position on every later one.
func Run(ctx context.Context, cfg Config) (Result, error) {
	r, err := open(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	defer r.close()
	pos, ok, err := r.position(ctx)
	if err != nil {
		return Result{}, err
	}
	if !ok {
		return r.bootstrap(ctx)
	}
	return r.incremental(ctx, pos)
}

func open(ctx context.Context, cfg Config) (r *run, err error) {
	if len(cfg.Tables) == 0 {
		return nil, routes.BadInput("binlog: no tables to capture")
	}
	r = &run{cfg: cfg, runID: cfg.RunID}
	if r.runID == "" {
		r.runID = routes.NewRunID()
	}
	if r.url, err = routes.ParseURL(cfg.SourceURL); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	if r.db, err = controlDB(r.url); err != nil {
		return r, err
	}
	if r.srv, err = readServer(ctx, r.db); err != nil {
		return r, err
	}
	if err := checkSettings(ctx, r.db); err != nil {
		return r, err
	}
	if r.source, err = routes.OpenSource(ctx, cfg.SourceURL); err != nil {
		return r, err
	}
	if r.dest, err = routes.OpenDestination(ctx, cfg.DestURL); err != nil {
		return r, err
	}
	if r.applier, err = cdc.AsApplier(r.dest, cfg.DestURL); err != nil {
		return r, err
	}
	return r, r.probe(ctx)
}

// controlDB opens a small database/sql pool on the source for status
// queries (the route's pool is for reads).
func controlDB(u *routes.URL) (*sql.DB, error) {
	nu := u.URL()
	c := driver.NewConfig()
	c.User = nu.User.Username()
	c.Passwd, _ = nu.User.Password()
	c.Net, c.Addr = "tcp", nu.Host
	if nu.Port() == "" {
		c.Addr = nu.Hostname() + ":3306"
	}
	conn, err := driver.NewConnector(c)
	if err != nil {
		return nil, routes.BadInput("binlog: source URL %s: %v", u, err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(2)
	return db, nil
}

// checkSettings refuses a server whose binlog cannot drive CDC, before
// anything moves (bad input, exit 2).
func checkSettings(ctx context.Context, db *sql.DB) error {
	var format, image string
	if err := db.QueryRowContext(ctx, `SELECT @@binlog_format, @@binlog_row_image`).Scan(&format, &image); err != nil {
		return fmt.Errorf("binlog: read binlog settings: %w", err)
	}
	if !strings.EqualFold(format, "ROW") || !strings.EqualFold(image, "FULL") {
		return &routes.ProbeError{Table: "(server)", Problem: fmt.Sprintf("binlog_format=%s, binlog_row_image=%s", format, image),
			Hint: "log_based needs binlog_format=ROW and binlog_row_image=FULL (and binlog_row_metadata=FULL for column names); set them in the server config"}
	}
	return nil
}

// probe reads every table through the mysql route; each needs a primary key.
func (r *run) probe(ctx context.Context) error {
	for _, p := range r.cfg.Tables {
		info, err := r.source.Probe(ctx, p.Source)
		if err != nil {
			return err
		}
		t := &cdc.Table{Source: info.Ref, Dest: p.Dest, Info: info}
		for _, c := range info.Columns {
			t.Columns, t.Types = append(t.Columns, c.Name), append(t.Types, c.NativeType)
		}
		for _, k := range info.PrimaryKey {
			for i, c := range t.Columns {
				if c == k {
					t.Key = append(t.Key, i)
				}
			}
		}
		if len(t.Key) == 0 {
			return &routes.ProbeError{Table: p.Source.String(), Problem: "no primary key",
				Hint: "log_based needs a primary key to apply updates and deletes; add one"}
		}
		if err := utf8Columns(ctx, r.db, info.Ref); err != nil {
			return err
		}
		r.tables = append(r.tables, t)
	}
	return nil
}

// utf8Columns refuses a text, ENUM or SET column in a character set that
// is not UTF-8 (latin1, ucs2, …): the binlog carries its bytes in that set
// and the capture hands them on as UTF-8, so latin1 'Ã©' landed as 'é'
// with exit 0 (attack s14), where the bulk read is converted by the
// server. ascii is UTF-8's subset; binary columns are bytes.
func utf8Columns(ctx context.Context, db *sql.DB, t routes.TableRef) error {
	rows, err := db.QueryContext(ctx, `SELECT COLUMN_NAME, CHARACTER_SET_NAME FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND CHARACTER_SET_NAME IS NOT NULL
  AND CHARACTER_SET_NAME NOT IN ('utf8', 'utf8mb3', 'utf8mb4', 'ascii', 'binary') ORDER BY ORDINAL_POSITION`, t.Schema, t.Name)
	if err != nil {
		return fmt.Errorf("character sets of %s: %w", t, err)
	}
	defer rows.Close()
	for rows.Next() {
		var col, cs string
		if err := rows.Scan(&col, &cs); err != nil {
			return fmt.Errorf("character sets of %s: %w", t, err)
		}
		return &routes.ProbeError{Table: t.String(), Column: col,
			Problem: fmt.Sprintf("is in character set %s: the binlog carries its bytes in %s, which log_based does not convert to UTF-8", cs, cs),
			Hint:    fmt.Sprintf("convert the column to utf8mb4 (ALTER TABLE %s MODIFY %s … CHARACTER SET utf8mb4), or copy the table with --mode replace or append, whose read the server converts", t, col)}
	}
	return rows.Err()
}

func (r *run) close() {
	for _, c := range []interface{ Close() error }{r.source, r.dest} {
		if c != nil {
			c.Close()
		}
	}
	if r.db != nil {
		r.db.Close()
	}
}

// position returns the lowest saved position over the pair's tables; ok is
// false when any table has none, which means (re-)bootstrap.
func (r *run) position(ctx context.Context) (Position, bool, error) {
	sr, ok := routes.As[routes.StateReader](r.dest)
	if !ok {
		return Position{}, false, fmt.Errorf("binlog: the destination cannot read its state")
	}
	var low Position
	for i, t := range r.tables {
		s, ok, err := sr.LoadState(ctx, t.Dest, t.Info.SourceID)
		if err != nil || !ok || s.Position == "" {
			return Position{}, false, err
		}
		p, err := ParsePosition(s.Position)
		if err != nil {
			return Position{}, false, fmt.Errorf("saved position of %s: %w", t.Dest, err)
		}
		if i == 0 || p.Before(low) {
			low = p
		}
	}
	return low, true, nil
}

// bootstrap records the coordinate, then loads every table and commits the
// coordinate with its rows (see the package doc for why an unpinned load
// is exactly right).
func (r *run) bootstrap(ctx context.Context) (Result, error) {
	res := Result{Bootstrap: true}
	pos, err := r.srv.current(ctx, r.db)
	if err != nil {
		return res, err
	}
	res.To = pos.String()
	at := time.Now().UTC()
	if err := routes.Checkpoint("bootstrap-copy"); err != nil {
		return res, err
	}
	var la cdc.LogAppender
	if r.cfg.Changelog {
		if la, err = cdc.AsLogAppender(r.dest, r.cfg.DestURL); err != nil {
			return res, err
		}
	}
	for _, t := range r.tables {
		var n int64
		if la != nil {
			n, err = cdc.BootstrapLog(ctx, r.source, r.dest, la, t, pos.String(), pos.logText(), at, r.runID)
		} else {
			n, err = cdc.Bootstrap(ctx, r.source, r.dest, r.applier, t, pos.String(), r.runID)
		}
		if err != nil {
			return res, err
		}
		res.Rows += n
	}
	return res, nil
}

// incremental drains from pos to the server's coordinate as of now and
// applies the folded window with that coordinate, in one destination
// transaction.
func (r *run) incremental(ctx context.Context, from Position) (Result, error) {
	res := Result{From: from.String(), To: from.String()}
	to, err := r.srv.current(ctx, r.db)
	if err != nil {
		return res, err
	}
	if err := sameServer(from, to); err != nil {
		return res, err
	}
	if err := checkRetained(ctx, r.db, from); err != nil {
		return res, err
	}
	// Changes stream into the destination transaction opened here, every
	// cdc.FlushChanges: memory is flat in the window's size.
	w, tx, err := cdc.Open(ctx, r.dest, r.cfg.DestURL, r.tables, r.cfg.Changelog)
	if err != nil {
		return res, err
	}
	defer tx.Rollback()
	if from.Before(to) {
		if err := r.drain(ctx, from, to, w); err != nil {
			return res, fmt.Errorf("drain binlog from %s to %s: %w", from, to, err)
		}
	} else {
		to = from
	}
	if err := cdc.Finish(ctx, tx, w, r.states(to.String(), int64(w.Changes))); err != nil {
		return res, err
	}
	if err := routes.Checkpoint("after-commit"); err != nil { // kill tests: committed, the report not printed yet
		return res, err
	}
	res.To = to.String()
	res.Count(w)
	return res, nil
}

func (r *run) states(pos string, rows int64) map[routes.TableRef]routes.State {
	out := map[routes.TableRef]routes.State{}
	for _, t := range r.tables {
		out[t.Dest] = routes.State{SourceID: t.Info.SourceID, Position: pos, RunID: r.runID, Rows: rows}
	}
	return out
}

// Drop clears the pair's saved positions so the next Run bootstraps again
// (weir reset). The destination tables stay; the binlog needs no cleanup.
func Drop(ctx context.Context, cfg Config) error {
	r, err := open(ctx, cfg)
	if err != nil {
		return err
	}
	defer r.close()
	if err := r.applier.ApplyWindow(ctx, cdc.NewWindow(), r.states("", 0)); err != nil {
		return fmt.Errorf("clear saved positions: %w", err)
	}
	return nil
}
