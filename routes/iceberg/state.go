package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
)

// The keys of weir's state. A commit writes all of them in one Iceberg
// transaction with its data: the table property survives snapshot expiry
// and is read first; the snapshot summary records the same state per
// snapshot, for history and for tables whose property was lost.
const (
	StatePrefix     = "weir.state."     // table property and summary: JSON of routes.State, per source
	WatermarkPrefix = "weir.watermark." // summary: the watermark, per source
	RunProperty     = "weir.run"        // summary: the run that made the snapshot
	RowsProperty    = "weir.rows"       // summary: rows that run committed
)

// stateProps returns the snapshot summary properties and the table
// properties that carry state.
func stateProps(s routes.State) (summary, tableProps iceberg.Properties) {
	js, _ := json.Marshal(stateJSON(s))
	summary = iceberg.Properties{
		WatermarkPrefix + s.SourceID: s.Watermark,
		StatePrefix + s.SourceID:     string(js),
		RunProperty:                  s.RunID,
		RowsProperty:                 strconv.FormatInt(s.Rows, 10),
	}
	return summary, iceberg.Properties{StatePrefix + s.SourceID: string(js)}
}

// savedState is routes.State as JSON, with stable lower-case keys.
type savedState struct {
	SourceID  string `json:"source"`
	Cursor    string `json:"cursor,omitempty"`
	Watermark string `json:"watermark,omitempty"`
	Position  string `json:"position,omitempty"`
	RunID     string `json:"run"`
	Rows      int64  `json:"rows"`
}

func stateJSON(s routes.State) savedState {
	return savedState{SourceID: s.SourceID, Cursor: s.Cursor, Watermark: s.Watermark, Position: s.Position, RunID: s.RunID, Rows: s.Rows}
}

func (s savedState) state() routes.State {
	return routes.State{SourceID: s.SourceID, Cursor: s.Cursor, Watermark: s.Watermark, Position: s.Position, RunID: s.RunID, Rows: s.Rows}
}

// LoadState returns the state the last commit from sourceID saved: the
// table property first, else the newest snapshot summary that has it.
// A table without weir state (written by another engine) has none.
func (e *Endpoint) LoadState(ctx context.Context, t routes.TableRef, sourceID string) (routes.State, bool, error) {
	tbl, err := e.loadTable(ctx, t)
	if errors.Is(err, routes.ErrNotFound) {
		return routes.State{}, false, nil
	}
	if err != nil {
		return routes.State{}, false, err
	}
	return stateIn(t, tbl.Metadata(), sourceID)
}

// stateIn is the state of sourceID in one version of a table's metadata:
// the table property first, else the newest snapshot summary that has it.
func stateIn(t routes.TableRef, meta table.Metadata, sourceID string) (routes.State, bool, error) {
	if raw, ok := meta.Properties()[StatePrefix+sourceID]; ok {
		return decodeState(t, raw)
	}
	return summaryState(t, meta, sourceID)
}

func decodeState(t routes.TableRef, raw string) (routes.State, bool, error) {
	var s savedState
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return routes.State{}, false, fmt.Errorf("state of %s: %w", t, err)
	}
	return s.state(), true, nil
}

// summaryState walks the current snapshot's ancestry for the newest
// summary that carries the source's state.
func summaryState(t routes.TableRef, meta table.Metadata, sourceID string) (routes.State, bool, error) {
	for snap := meta.CurrentSnapshot(); snap != nil; snap = parentOf(meta, snap) {
		if snap.Summary == nil {
			continue
		}
		props := snap.Summary.Properties
		if raw, ok := props[StatePrefix+sourceID]; ok {
			return decodeState(t, raw)
		}
		if wm, ok := props[WatermarkPrefix+sourceID]; ok {
			return routes.State{SourceID: sourceID, Watermark: wm, RunID: props[RunProperty]}, true, nil
		}
	}
	return routes.State{}, false, nil
}

func parentOf(meta table.Metadata, s *table.Snapshot) *table.Snapshot {
	if s.ParentSnapshotID == nil {
		return nil
	}
	return meta.SnapshotByID(*s.ParentSnapshotID)
}

// States returns every state saved in table's properties, from one
// version of its metadata (routes.StateLister). A table that does not
// exist has none.
func (e *Endpoint) States(ctx context.Context, t routes.TableRef) ([]routes.State, error) {
	tbl, err := e.loadTable(ctx, t)
	if errors.Is(err, routes.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var states []routes.State
	for k, raw := range tbl.Metadata().Properties() {
		if !strings.HasPrefix(k, StatePrefix) {
			continue
		}
		s, _, err := decodeState(t, raw)
		if err != nil {
			return nil, err
		}
		states = append(states, s)
	}
	sort.Slice(states, func(i, j int) bool { return states[i].SourceID < states[j].SourceID })
	return states, nil
}
