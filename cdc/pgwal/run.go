package pgwal

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/postgres"
)

// Result reports one run.
type Result = cdc.Result

// run is one Run's connections and tables.
type run struct {
	cfg     Config
	name    string // slot and publication
	runID   string
	src     *pgx.Conn          // control: slot, publication, WAL end
	source  routes.Source      // the postgres route: probe and bootstrap reads
	dest    routes.Destination // any route that implements cdc.Applier
	applier cdc.Applier
	tables  []*table
}

// Run bootstraps the pair on its first run and drains, folds and applies
// the changes since the saved position on every later one.
func Run(ctx context.Context, cfg Config) (Result, error) {
	r, err := open(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	defer r.close(ctx)
	if err := r.checkValues(); err != nil {
		return Result{}, err
	}
	pos, ok, err := r.position(ctx)
	if err != nil {
		return Result{}, err
	}
	var res Result
	if !ok {
		res, err = r.bootstrap(ctx)
	} else {
		res, err = r.incremental(ctx, pos)
	}
	if err != nil {
		return res, err
	}
	return res, r.report(ctx, &res)
}

func open(ctx context.Context, cfg Config) (r *run, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	name, err := cfg.Name()
	if err != nil {
		return nil, routes.BadInput("pgwal: %v", err)
	}
	r = &run{cfg: cfg, name: name, runID: cfg.RunID}
	if r.runID == "" {
		r.runID = routes.NewRunID()
	}
	defer func() {
		if err != nil {
			r.close(ctx)
		}
	}()
	srcCfg, err := pgx.ParseConfig(cfg.SourceURL)
	if err != nil {
		return r, fmt.Errorf("connect source %s: %w", routes.Redact(cfg.SourceURL), err)
	}
	postgres.Session(srcCfg.RuntimeParams)
	if r.src, err = pgx.ConnectConfig(ctx, srcCfg); err != nil {
		return r, fmt.Errorf("connect source %s: %w", routes.Redact(cfg.SourceURL), err)
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

func (r *run) probe(ctx context.Context) error {
	for _, p := range r.cfg.Tables {
		// The route's probe first: it turns a missing table into bad input
		// (exit 2), where the catalog query below would only fail.
		info, err := r.source.Probe(ctx, p.Source)
		if err != nil {
			return err
		}
		t, err := probe(ctx, r.src, p)
		if err != nil {
			return err
		}
		t.Info = info
		r.tables = append(r.tables, t)
	}
	return nil
}

// checkValues refuses, before anything moves, a column whose changes the
// destination cannot take (textOnly). Not part of open: weir reset of
// such a pair still runs.
func (r *run) checkValues() error {
	u, err := routes.ParseURL(r.cfg.DestURL)
	if err != nil {
		return err
	}
	for _, t := range r.tables {
		for _, c := range t.Info.Columns {
			if err := textOnly(t.Source, c, u.Scheme()); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *run) close(ctx context.Context) {
	if r.src != nil {
		r.src.Close(context.WithoutCancel(ctx))
	}
	for _, c := range []interface{ Close() error }{r.source, r.dest} {
		if c != nil {
			c.Close()
		}
	}
}

// position returns the lowest saved position over the pair's tables (they
// are committed together, so they agree unless a table was added); ok is
// false when any table has none, which means (re-)bootstrap.
func (r *run) position(ctx context.Context) (string, bool, error) {
	sr, ok := routes.As[routes.StateReader](r.dest)
	if !ok {
		return "", false, errors.New("pgwal: the destination cannot read its state")
	}
	var low pglogrepl.LSN
	for i, t := range r.tables {
		s, ok, err := sr.LoadState(ctx, t.Dest, t.Info.SourceID)
		if err != nil || !ok || s.Position == "" {
			return "", false, err
		}
		lsn, err := pglogrepl.ParseLSN(s.Position)
		if err != nil {
			return "", false, fmt.Errorf("saved position of %s: %w", t.Dest, err)
		}
		t.saved = lsn
		if i == 0 || lsn < low {
			low = lsn
		}
	}
	return low.String(), true, nil
}

// states is the state row of every table at position pos.
func (r *run) states(pos string, rows int64) map[routes.TableRef]routes.State {
	out := map[routes.TableRef]routes.State{}
	for _, t := range r.tables {
		out[t.Dest] = routes.State{SourceID: t.Info.SourceID, Position: pos, RunID: r.runID, Rows: rows}
	}
	return out
}

// Drop removes the pair's slot and publication and clears its saved
// positions, so the next Run bootstraps again (weir reset). The
// destination tables stay.
func Drop(ctx context.Context, cfg Config) error {
	r, err := open(ctx, cfg)
	if err != nil {
		return err
	}
	defer r.close(ctx)
	if err := r.applier.ApplyWindow(ctx, cdc.NewWindow(), r.states("", 0)); err != nil {
		return fmt.Errorf("clear saved positions: %w", err)
	}
	if err := dropSlot(ctx, r.src, r.name); err != nil {
		return err
	}
	return dropPublication(ctx, r.src, r.name)
}
