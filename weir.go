// Package weir is the Go API of weir: move whole tables between databases
// and lake formats at wire speed, in bounded memory, atomically.
//
//	rep, err := weir.Transfer(ctx, "postgres://…/app", "postgres://…/dw",
//	        weir.TransferOptions{Tables: []string{"public.events"}})
//
// Import github.com/weirhq/weir/routes/all (or single adapters) to register
// the URL schemes.
package weir

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

// TransferOptions shape a transfer. Zero values are the defaults.
type TransferOptions struct {
	Tables        []string    // source tables, "schema.table"
	Schema        string      // every table of this source schema (instead of Tables)
	DestTable     string      // destination table name, with one source table
	DestSchema    string      // destination schema for every table (default: routes.DestRef — a MySQL or ClickHouse URL's database, else the source's schema)
	Mode          routes.Mode // replace (default), append, merge, log_based
	Cursor        string      // append/merge watermark column (default: integer primary key)
	PrimaryKey    []string    // merge key (default: the source's primary key)
	Parallel      int         // pipes (default: CPU and memory aware)
	ChunkBytes    int         // bytes per batch and pipe (default 4 MiB, thinned under a memory cap)
	NoPassthrough bool        // force Arrow even where both ends speak one wire format
	Changelog     bool        // log_based: append every change to the destination (docs/cdc.md), not a replica
	SlotWALWarn   int64       // log_based from PostgreSQL: warn above this much WAL retained by the slot (0: 4 GiB)
	Progress      *routes.Progress
	RunID         string // the run's id (default: a new one)
}

// Report is what a transfer did; it is the --json output.
type Report struct {
	RunID       string        `json:"run_id"`
	Source      string        `json:"source"`
	Destination string        `json:"destination"`
	Mode        routes.Mode   `json:"mode"`
	Rows        int64         `json:"rows"`
	Bytes       int64         `json:"bytes"`
	ElapsedMS   int64         `json:"elapsed_ms"`
	Parallel    int           `json:"parallel"`
	ChunkBytes  int           `json:"chunk_bytes"`
	Tables      []TableReport `json:"tables"`
	CDC         *cdc.Result   `json:"cdc,omitempty"` // mode log_based: bootstrap or the drained window
}

// TableReport is one table's part of a Report.
type TableReport struct {
	routes.CopyResult
	ElapsedMS int64  `json:"elapsed_ms"`
	Error     string `json:"error,omitempty"`
}

// Transfer copies tables from src to dst (URLs). Tables go one after another
// under one pipe budget, so peak memory is one table's; each lands
// atomically on its own, and one table's failure never stops the others.
// The error joins every table's error (errors.Is finds ErrLocked and
// ErrBadInput in it).
func Transfer(ctx context.Context, src, dst string, opts TransferOptions) (*Report, error) {
	start := time.Now()
	mode, err := routes.ParseMode(string(opts.Mode))
	if err != nil {
		return nil, err
	}
	if mode == routes.ModeLogBased {
		return transferLogBased(ctx, src, dst, opts)
	}
	if opts.Changelog {
		return nil, routes.BadInput("--changelog needs --mode log_based (it logs what change capture reads)")
	}
	n, err := parseNames(opts)
	if err != nil {
		return nil, err
	}
	s, d, err := incremental.OpenPair(ctx, src, dst)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	defer d.Close()
	tables, err := sourceTables(ctx, s, n)
	if err != nil {
		return nil, err
	}
	if err := distinctDestinations(ctx, s, d, tables, n); err != nil {
		return nil, err
	}
	budget := routes.Budget{Parallel: opts.Parallel, ChunkBytes: opts.ChunkBytes}.Fill()
	rep := &Report{RunID: runID(opts), Source: routes.Redact(src), Destination: routes.Redact(dst), Mode: mode, Parallel: budget.Parallel, ChunkBytes: budget.ChunkBytes}
	var errs []error
	for _, t := range tables {
		spec := routes.CopySpec{Table: t, DestTable: n.destTable, DestSchema: n.destSchema, Mode: mode, Budget: budget, RunID: rep.RunID,
			Key: opts.PrimaryKey, NoPassthrough: opts.NoPassthrough, Progress: opts.Progress}
		res, _, err := incremental.Copy(ctx, s, d, spec, opts.Cursor)
		rep.add(res, err)
		if err != nil {
			errs = append(errs, tableErr(t, err))
		}
		if ctx.Err() != nil {
			break
		}
	}
	rep.ElapsedMS = time.Since(start).Milliseconds()
	return rep, errors.Join(errs...)
}

// names are a transfer's table and schema names, each parsed once by
// routes.ParseTableRef's rules: a malformed one is bad input that names
// its flag, never ignored.
type names struct {
	tables     []routes.TableRef
	schema     string
	destTable  routes.TableRef
	destSchema string
}

func parseNames(opts TransferOptions) (names, error) {
	var n names
	for _, name := range opts.Tables {
		t, err := routes.ParseTableRef(strings.TrimSpace(name))
		if err != nil {
			return n, fmt.Errorf("--table/--tables: %w", err)
		}
		n.tables = append(n.tables, t)
	}
	var err error
	if opts.Schema != "" {
		if n.schema, err = routes.ParseSourceSchema(strings.TrimSpace(opts.Schema)); err != nil {
			return n, fmt.Errorf("--schema: %w", err)
		}
	}
	if opts.DestTable != "" {
		if n.destTable, err = routes.ParseTableRef(strings.TrimSpace(opts.DestTable)); err != nil {
			return n, fmt.Errorf("--dest-table: %w", err)
		}
	}
	if opts.DestSchema != "" {
		if n.destSchema, err = routes.ParseSchema(strings.TrimSpace(opts.DestSchema)); err != nil {
			return n, fmt.Errorf("--dest-schema: %w", err)
		}
	}
	return n, nil
}

func sourceTables(ctx context.Context, s routes.Source, n names) ([]routes.TableRef, error) {
	out := n.tables
	if n.schema != "" {
		l, ok := routes.As[routes.TableLister](s)
		if !ok {
			return nil, fmt.Errorf("%w: this source cannot list a schema's tables; name them with --tables", routes.ErrUnsupported)
		}
		listed, err := l.ListTables(ctx, n.schema)
		if err != nil {
			return nil, err
		}
		out = append(out, listed...)
	}
	if len(out) == 0 {
		return nil, routes.BadInput("no table to transfer: pass --table, --tables or --schema")
	}
	if n.destTable.Name != "" && len(out) > 1 {
		return nil, routes.BadInput("--dest-table names one table, but %d are being transferred; use --dest-schema", len(out))
	}
	return out, nil
}

// distinctDestinations refuses, before a row moves, a run in which two
// source tables would land in one destination table (a.t and b.t with
// --dest-schema S; t.csv and t.csv.gz, both named by their stem): each
// would replace or append to the other's rows in turn. Each table is
// probed for the name it lands under (a file's is its stem); a table
// whose probe fails is left to its copy, which reports it.
func distinctDestinations(ctx context.Context, s routes.Source, d routes.Destination, tables []routes.TableRef, n names) error {
	if len(tables) < 2 {
		return nil
	}
	from := map[routes.TableRef]routes.TableRef{}
	for _, t := range tables {
		info, err := s.Probe(ctx, t)
		if err != nil {
			continue
		}
		dest, err := routes.DestinationOf(info, d, routes.CopySpec{DestTable: n.destTable, DestSchema: n.destSchema})
		if err != nil {
			continue
		}
		if prev, dup := from[dest]; dup {
			return routes.BadInput("%s and %s would both land in %s, one overwriting the other: transfer them in separate runs with --dest-table, or into different --dest-schema", prev, t, dest)
		}
		from[dest] = t
	}
	return nil
}

func (r *Report) add(res routes.CopyResult, err error) {
	tr := TableReport{CopyResult: res, ElapsedMS: res.Elapsed.Milliseconds()}
	if err != nil {
		// Nothing of a failed table was committed.
		tr.Error = routes.Redact(err.Error())
		tr.Rows, res.Rows = 0, 0
	}
	r.Rows += res.Rows
	r.Bytes += res.Bytes
	r.Tables = append(r.Tables, tr)
}

func runID(opts TransferOptions) string {
	if opts.RunID != "" {
		return opts.RunID
	}
	return routes.NewRunID()
}

// tableErr names the table an error is about, unless the probe's error
// already starts with it.
func tableErr(t routes.TableRef, err error) error {
	var pe *routes.ProbeError
	if errors.As(err, &pe) && pe.Table == t.String() {
		return err
	}
	return fmt.Errorf("%s: %w", t, err)
}
