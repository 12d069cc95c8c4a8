package pgwal

import (
	"context"
	"fmt"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir/routes"
)

// Result reports one run.
type Result struct {
	Bootstrap bool   `json:"bootstrap"`         // this run was the first load
	Rows      int64  `json:"rows,omitempty"`    // rows the bootstrap loaded
	Changes   int    `json:"changes,omitempty"` // changes drained from the slot
	Upserts   int    `json:"upserts,omitempty"` // rows upserted after the fold
	Deletes   int    `json:"deletes,omitempty"` // rows deleted after the fold
	Truncates int    `json:"truncates,omitempty"`
	From      string `json:"from,omitempty"` // the position the run started at
	To        string `json:"to"`             // the position it committed
}

// run is one Run's connections and tables.
type run struct {
	cfg    Config
	name   string // slot and publication
	runID  string
	src    *pgx.Conn
	dst    *pgx.Conn
	tables []*table
	fail   func(stage string) error // failure injection, tests only
}

// failpoint, when set (tests), is called at named stages of the apply
// transaction; an error it returns aborts the run there.
var failpoint func(stage string) error

// Run bootstraps the pair on its first run and drains, folds and applies
// the changes since the saved position on every later one.
func Run(ctx context.Context, cfg Config) (Result, error) {
	r, err := open(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	defer r.close(ctx)
	pos, ok, err := r.position(ctx)
	if err != nil {
		return Result{}, err
	}
	if !ok {
		return r.bootstrap(ctx)
	}
	return r.incremental(ctx, pos)
}

func open(ctx context.Context, cfg Config) (*run, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	name, err := cfg.Name()
	if err != nil {
		return nil, routes.BadInput("pgwal: %v", err)
	}
	r := &run{cfg: cfg, name: name, runID: cfg.RunID, fail: noFail}
	if r.runID == "" {
		r.runID = routes.NewRunID()
	}
	if failpoint != nil {
		r.fail = failpoint
	}
	if r.src, err = pgx.Connect(ctx, cfg.SourceURL); err != nil {
		return nil, fmt.Errorf("connect source %s: %w", routes.Redact(cfg.SourceURL), err)
	}
	if r.dst, err = pgx.Connect(ctx, cfg.DestURL); err != nil {
		r.src.Close(ctx)
		return nil, fmt.Errorf("connect destination %s: %w", routes.Redact(cfg.DestURL), err)
	}
	return r, r.probe(ctx)
}

func noFail(string) error { return nil }

func (r *run) probe(ctx context.Context) error {
	for _, p := range r.cfg.Tables {
		t, err := probe(ctx, r.src, p)
		if err != nil {
			r.close(ctx)
			return err
		}
		r.tables = append(r.tables, t)
	}
	return nil
}

func (r *run) close(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	r.src.Close(ctx)
	r.dst.Close(ctx)
}

// position returns the lowest saved position over the pair's tables (they
// are committed together, so they agree unless a table was added); ok is
// false when any table has none, which means (re-)bootstrap.
func (r *run) position(ctx context.Context) (string, bool, error) {
	var low pglogrepl.LSN
	for i, t := range r.tables {
		pos, ok, err := loadPosition(ctx, r.dst, t.Dest, r.cfg.sourceID(r.cfg.Tables[i]))
		if err != nil || !ok {
			return "", false, err
		}
		lsn, err := pglogrepl.ParseLSN(pos)
		if err != nil {
			return "", false, fmt.Errorf("saved position of %s: %w", t.Dest, err)
		}
		if i == 0 || lsn < low {
			low = lsn
		}
	}
	return low.String(), true, nil
}

// Drop removes the pair's slot and publication and its saved positions, so
// the next Run bootstraps again (weir reset). The destination tables stay.
func Drop(ctx context.Context, cfg Config) error {
	r, err := open(ctx, cfg)
	if err != nil {
		return err
	}
	defer r.close(ctx)
	for i, t := range r.tables {
		if err := deleteState(ctx, r.dst, t.Dest, cfg.sourceID(cfg.Tables[i])); err != nil {
			return err
		}
	}
	if err := dropSlot(ctx, r.src, r.name); err != nil {
		return err
	}
	return dropPublication(ctx, r.src, r.name)
}
