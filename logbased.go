package weir

import (
	"context"
	"time"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/cdc/capture"
	"github.com/weirhq/weir/routes"
)

// transferLogBased runs one batch CDC pass over the named tables (see
// docs/cdc.md): the first run bootstraps them, later runs apply the
// changes logged since. Tables must be schema-qualified.
func transferLogBased(ctx context.Context, src, dst string, opts TransferOptions) (*Report, error) {
	start := time.Now()
	if opts.Schema != "" {
		return nil, routes.BadInput("log_based: name the tables with --tables (--schema is not supported: the capture is fixed per table set)")
	}
	pairs, err := logPairs(dst, opts)
	if err != nil {
		return nil, err
	}
	rep := &Report{RunID: runID(opts), Source: routes.Redact(src), Destination: routes.Redact(dst), Mode: routes.ModeLogBased}
	res, err := capture.RunWith(ctx, src, dst, pairs, rep.RunID, capture.Options{Changelog: opts.Changelog, SlotWALWarn: opts.SlotWALWarn})
	if err == nil {
		rep.CDC = &res
	}
	rep.Rows = res.Rows + int64(res.Upserts+res.Deletes+res.Appended)
	for _, p := range pairs {
		tr := TableReport{CopyResult: routes.CopyResult{Table: p.Source.String(), DestTable: p.Dest.String()}}
		if err != nil {
			tr.Error = routes.Redact(err.Error())
		}
		rep.Tables = append(rep.Tables, tr)
	}
	rep.ElapsedMS = time.Since(start).Milliseconds()
	return rep, err
}

func logPairs(dst string, opts TransferOptions) ([]cdc.Pair, error) {
	du, err := routes.ParseURL(dst)
	if err != nil {
		return nil, err
	}
	if len(opts.Tables) == 0 {
		return nil, routes.BadInput("log_based: no table: pass --table or --tables")
	}
	if opts.DestTable != "" && len(opts.Tables) > 1 {
		return nil, routes.BadInput("--dest-table names one table, but %d are captured; use --dest-schema", len(opts.Tables))
	}
	n, err := parseNames(opts)
	if err != nil {
		return nil, err
	}
	var pairs []cdc.Pair
	from := map[routes.TableRef]routes.TableRef{}
	for _, t := range n.tables {
		dest, err := routes.DestRef(du, t, n.destTable, n.destSchema)
		if err != nil {
			return nil, err
		}
		if dest.Schema == "" { // an unqualified --dest-table on PostgreSQL: the capture keys by schema.table
			dest.Schema = t.Schema
		}
		if prev, dup := from[dest]; dup {
			return nil, routes.BadInput("%s and %s would both be captured into %s, one's changes applied over the other's: capture them into different --dest-schema", prev, t, dest)
		}
		from[dest] = t
		pairs = append(pairs, cdc.Pair{Source: t, Dest: dest})
	}
	return pairs, nil
}

// ResetLogBased forgets a log_based pair's position (and drops its
// PostgreSQL slot), so the next run bootstraps again.
func ResetLogBased(ctx context.Context, src, dst string, opts TransferOptions) error {
	pairs, err := logPairs(dst, opts)
	if err != nil {
		return err
	}
	return capture.DropWith(ctx, src, dst, pairs, capture.Options{Changelog: opts.Changelog})
}
