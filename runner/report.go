package runner

import (
	"time"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/routes"
)

// Report is what one run of one task did: the JSON object `weir once
// --json` prints and the generated Dagster assets attach as metadata
// (rows, offsets, lag and elapsed_ms are the keys they rely on).
type Report struct {
	Task        string                 `json:"task"`
	Kind        string                 `json:"kind"` // transfer | model | stream
	RunID       string                 `json:"run_id"`
	Mode        string                 `json:"mode"`
	Sink        string                 `json:"sink"`                  // conn:schema.table (the first, for a multi-table transfer)
	Rows        int64                  `json:"rows"`                  // rows written to the sink (= rows_out)
	RowsIn      int64                  `json:"rows_in"`               // rows read from the sources
	RowsOut     int64                  `json:"rows_out"`              // rows written to the sink
	Quarantined int64                  `json:"quarantined"`           // rows written to <sink>__quarantine
	Bytes       int64                  `json:"bytes,omitempty"`       // bytes read (transfers)
	Offsets     map[string]OffsetRange `json:"offsets"`               // per source: the window read
	Lag         int64                  `json:"lag"`                   // the sources' lag after the run, in LagUnit (-1: units differ, see Lags)
	LagUnit     string                 `json:"lag_unit,omitempty"`    // rows, offsets, seconds… ("mixed": see Lags)
	Lags        map[string]int64       `json:"lags,omitempty"`        // per unit: the sources' lag totals
	NothingNew  bool                   `json:"nothing_new,omitempty"` // no source had anything new: nothing written
	Held        int64                  `json:"held,omitempty"`        // rows with no lookup match (on_missing: hold): the batch was not committed
	Batches     int                    `json:"batches,omitempty"`     // model: the batches the run read and committed (max_batch_rows)
	Changes     []string               `json:"changes,omitempty"`     // on_change findings
	Waiting     []string               `json:"waiting,omitempty"`     // model: sources read only up to what a backfill under way on them has committed whole
	CDC         *cdc.Result            `json:"cdc,omitempty"`         // log_based: bootstrap or the drained window
	Contract    *ContractResult        `json:"contract,omitempty"`    // the contract check, once it ran
	ElapsedMS   int64                  `json:"elapsed_ms"`
	Error       string                 `json:"error,omitempty"`
	start       time.Time

	// QuarantineTable is the table Quarantined counts rows of, as the run
	// named it (QuarantineTable: <sink>__quarantine, shortened to fit the
	// sink's identifier limit); empty for a transfer.
	QuarantineTable routes.TableRef `json:"-"`
}

// ContractResult is the outcome of a task's contract check: for a stream,
// summed over its batches.
type ContractResult struct {
	Checked     int64            `json:"checked"`         // rows (events) checked
	Broken      int64            `json:"broken"`          // rows that break at least one rule
	MaxBadRatio float64          `json:"max_bad_ratio"`   // the contract's threshold
	Passed      bool             `json:"passed"`          // broken/checked <= max_bad_ratio in every batch
	Rules       map[string]int64 `json:"rules,omitempty"` // rows breaking each rule, by its _weir_reason label (only rules some row broke): the failed_rules
	// DatasetRules are the outcomes of an OLC contract's dataset rules,
	// judged over the good rows (per batch for a model); a failed one of
	// severity error makes Passed false but quarantines nothing.
	DatasetRules []DatasetOutcome `json:"dataset_rules,omitempty"`
}

// OffsetRange is the window a run read from one source: From < offset <= To.
type OffsetRange struct {
	Table string `json:"table"`
	From  string `json:"from"`
	To    string `json:"to"`
}

func newReport(t *dagfile.Task) *Report {
	rep := &Report{Task: t.Name, Kind: string(t.Kind), RunID: routes.NewRunID(),
		Offsets: map[string]OffsetRange{}, start: time.Now()}
	if s := t.Sink(); !s.IsZero() {
		rep.Sink = s.String()
	}
	switch {
	case t.Transfer != nil:
		rep.Mode = t.Transfer.Mode
	case t.Model != nil:
		rep.Mode = t.Model.Mode
	}
	return rep
}

// finish stamps the elapsed time and the error.
func (r *Report) finish(err error) {
	r.Rows = r.RowsOut
	r.ElapsedMS = time.Since(r.start).Milliseconds()
	if err != nil {
		r.Error = routes.Redact(err.Error())
	}
}
