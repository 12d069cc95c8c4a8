package bigquery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	bq "cloud.google.com/go/bigquery"
	"google.golang.org/api/iterator"

	"github.com/weirhq/weir/routes"
)

// StateTable is the dataset's log of commits: one row per commit into a
// destination table from a source, the latest (highest version) the
// state. It is appended to, never updated: append and merge insert their
// row inside the data's transaction; replace (which swaps with a copy job
// and so has no transaction) loads it with a free load job right after the
// swap, and a crash in between is settled from the lock (see settle).
const StateTable = routes.StateTableName

var stateSchema = bq.Schema{
	{Name: "dest_table", Type: bq.StringFieldType, Required: true},
	{Name: "source", Type: bq.StringFieldType, Required: true},
	{Name: "cursor_column", Type: bq.StringFieldType},
	{Name: "watermark", Type: bq.StringFieldType},
	{Name: "position", Type: bq.StringFieldType},
	{Name: "run_id", Type: bq.StringFieldType},
	{Name: "rows", Type: bq.IntegerFieldType},
	{Name: "job_id", Type: bq.StringFieldType},
	{Name: "version", Type: bq.IntegerFieldType, Required: true},
}

// stateColumns lists stateSchema's columns for SQL, quoted: ROWS is a
// reserved keyword of GoogleSQL.
var stateColumns = func() string {
	names := make([]string, len(stateSchema))
	for i, f := range stateSchema {
		names[i] = f.Name
	}
	return columnList(names, "")
}()

// stateRow is one row of StateTable.
type stateRow struct {
	Dest      string `json:"dest_table"`
	Source    string `json:"source"`
	Cursor    string `json:"cursor_column"`
	Watermark string `json:"watermark"`
	Position  string `json:"position"`
	RunID     string `json:"run_id"`
	Rows      int64  `json:"rows"`
	JobID     string `json:"job_id"`
	Version   int64  `json:"version"`
}

func newStateRow(dest routes.TableRef, s routes.State, jobID string) stateRow {
	return stateRow{Dest: dest.Name, Source: s.SourceID, Cursor: s.Cursor, Watermark: s.Watermark,
		Position: s.Position, RunID: s.RunID, Rows: s.Rows, JobID: jobID, Version: time.Now().UnixNano()}
}

func (r stateRow) state() routes.State {
	return routes.State{SourceID: r.Source, Cursor: r.Cursor, Watermark: r.Watermark, Position: r.Position, RunID: r.RunID, Rows: r.Rows}
}

func stateRef(dataset string) routes.TableRef {
	return routes.TableRef{Schema: dataset, Name: StateTable}
}

// ensureStateTable creates the dataset's state table if missing.
func (e *Endpoint) ensureStateTable(ctx context.Context, dataset string) error {
	err := e.table(stateRef(dataset)).Create(ctx, &bq.TableMetadata{Schema: stateSchema,
		Description: "weir: one row per commit; the highest version per (dest_table, source) is the state"})
	if err != nil && httpCode(err) != http.StatusConflict {
		return fmt.Errorf("create %s.%s: %w", dataset, StateTable, err)
	}
	if err == nil {
		return nil
	}
	md, err := e.tableMeta(ctx, stateRef(dataset))
	if err != nil || md == nil {
		return err
	}
	return checkStateSchema(stateRef(dataset), md)
}

// checkStateSchema refuses a _weir_state that is not weir's (another
// tool's table of that name) before a row moves: weir would read
// watermarks from it and write its commits into it.
func checkStateSchema(t routes.TableRef, md *bq.TableMetadata) error {
	have := make([]string, len(md.Schema))
	for i, f := range md.Schema {
		have[i] = f.Name
	}
	want := make([]string, len(stateSchema))
	for i, f := range stateSchema {
		want[i] = f.Name
	}
	if len(have) == 0 { // a table with no columns is not weir's either
		have = []string{""}
	}
	return routes.CheckStateColumns(t, have, want)
}

// insertStateSQL inserts r inside a transaction; its version is at least
// one above every earlier commit of the pair, whatever the clocks say.
func (e *Endpoint) insertStateSQL(dataset string, r stateRow) string {
	tbl := e.ident(stateRef(dataset))
	return fmt.Sprintf(`INSERT INTO %s (%s)
SELECT %s, %s, %s, %s, %s, %s, %d, %s, GREATEST(%d, COALESCE(MAX(version), 0) + 1) FROM %s WHERE dest_table = %s AND source = %s`,
		tbl, stateColumns, quoteString(r.Dest), quoteString(r.Source), quoteString(r.Cursor), quoteString(r.Watermark),
		quoteString(r.Position), quoteString(r.RunID), r.Rows, quoteString(r.JobID), r.Version,
		tbl, quoteString(r.Dest), quoteString(r.Source))
}

// loadState appends r with a load job (no DML: free, sandbox-safe).
func (e *Endpoint) loadState(ctx context.Context, dataset string, r stateRow) error {
	if prev, ok, err := e.readState(ctx, routes.TableRef{Schema: dataset, Name: r.Dest}, r.Source); err != nil {
		return err
	} else if ok && prev.Version >= r.Version {
		r.Version = prev.Version + 1
	}
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	src := bq.NewReaderSource(bytes.NewReader(append(line, '\n')))
	src.SourceFormat = bq.JSON
	src.Schema = stateSchema
	l := e.table(stateRef(dataset)).LoaderFrom(src)
	l.WriteDisposition = bq.WriteAppend
	l.CreateDisposition = bq.CreateNever
	job, err := l.Run(ctx)
	if err := runJob(ctx, job, err); err != nil {
		return fmt.Errorf("save state of %s.%s: %w", dataset, r.Dest, err)
	}
	return nil
}

// readState returns the latest row of (dest, source).
func (e *Endpoint) readState(ctx context.Context, dest routes.TableRef, source string) (stateRow, bool, error) {
	md, err := e.tableMeta(ctx, stateRef(dest.Schema))
	if err != nil || md == nil {
		return stateRow{}, false, err
	}
	if err := checkStateSchema(stateRef(dest.Schema), md); err != nil {
		return stateRow{}, false, err
	}
	q := e.client.Query(fmt.Sprintf(`SELECT %s
FROM %s WHERE dest_table = %s AND source = %s ORDER BY version DESC LIMIT 1`,
		stateColumns, e.ident(stateRef(dest.Schema)), quoteString(dest.Name), quoteString(source)))
	it, err := q.Read(ctx)
	if err != nil {
		return stateRow{}, false, fmt.Errorf("load state of %s: %w", dest, err)
	}
	var vals []bq.Value
	err = it.Next(&vals)
	if errors.Is(err, iterator.Done) {
		return stateRow{}, false, nil
	}
	if err != nil {
		return stateRow{}, false, fmt.Errorf("load state of %s: %w", dest, err)
	}
	return rowFromValues(vals), true, nil
}

func rowFromValues(v []bq.Value) stateRow {
	str := func(x bq.Value) string {
		s, _ := x.(string)
		return s
	}
	num := func(x bq.Value) int64 {
		switch n := x.(type) {
		case int64:
			return n
		case string:
			i, _ := strconv.ParseInt(n, 10, 64)
			return i
		}
		return 0
	}
	return stateRow{Dest: str(v[0]), Source: str(v[1]), Cursor: str(v[2]), Watermark: str(v[3]), Position: str(v[4]),
		RunID: str(v[5]), Rows: num(v[6]), JobID: str(v[7]), Version: num(v[8])}
}

// LoadState returns what the last commit into table from sourceID saved.
// A replace that swapped its table in but died before saving its state is
// found through the lock it left (its swap job landed: its state counts).
func (e *Endpoint) LoadState(ctx context.Context, table routes.TableRef, sourceID string) (routes.State, bool, error) {
	dest, err := e.ref(table)
	if err != nil {
		return routes.State{}, false, err
	}
	h, err := e.lockHolder(ctx, dest)
	if err != nil {
		return routes.State{}, false, err
	}
	if h != nil && h.Swap != nil && h.Swap.State.SourceID == sourceID && h.age(time.Now()) > e.cfg.Lease {
		landed, err := e.jobLanded(ctx, h.Swap.JobID)
		if err != nil || landed {
			return h.Swap.State, landed, err
		}
	}
	r, ok, err := e.readState(ctx, dest, sourceID)
	return r.state(), ok, err
}

// settle finishes the swap of a dead run (we hold its lease now): if its
// job landed, its state row is saved as its commit would have.
func (e *Endpoint) settle(ctx context.Context, dest routes.TableRef, p pending) error {
	landed, err := e.jobLanded(ctx, p.JobID)
	if err != nil || !landed {
		return err
	}
	if err := e.ensureStateTable(ctx, dest.Schema); err != nil {
		return err
	}
	if last, ok, err := e.readState(ctx, dest, p.State.SourceID); err != nil || (ok && last.JobID == p.JobID) {
		return err // already saved: it died after its state, before its unlock
	}
	return e.loadState(ctx, dest.Schema, newStateRow(dest, p.State, p.JobID))
}

// jobLanded reports whether a commit job ran to success (waiting for it if
// it is still running); a job never created did not land.
func (e *Endpoint) jobLanded(ctx context.Context, id string) (bool, error) {
	job, err := e.client.JobFromID(ctx, id)
	if httpCode(err) == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look up job %s: %w", id, err)
	}
	status, err := job.Wait(ctx)
	if err != nil {
		return false, fmt.Errorf("look up job %s: %w", id, err)
	}
	return status.Err() == nil, nil
}
