package pgwal

import (
	"encoding/hex"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// value turns pgoutput's text output of column i into the change value
// every destination reads the same way the bulk route writes it: booleans
// as bool, bytea as []byte, timestamps as time.Time (UTC); everything else
// stays the type's text output (ok false), which the postgres destination
// takes as is and the others parse as the bulk route's text. A text the
// parse does not understand (infinity, BC dates) stays text.
func (t *table) value(i int, text string) (v any, ok bool) {
	if t.Info == nil || i >= len(t.Info.Columns) {
		return nil, false
	}
	switch typ := t.Info.Columns[i].Type.(type) {
	case *arrow.BooleanType:
		switch text {
		case "t":
			return true, true
		case "f":
			return false, true
		}
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		if b, err := hex.DecodeString(strings.TrimPrefix(text, `\x`)); err == nil {
			return b, true
		}
	case *arrow.TimestampType:
		if ts, ok := parseTimestamp(text, typ.TimeZone != ""); ok {
			return ts, true
		}
	}
	return nil, false
}

// parseTimestamp reads PostgreSQL's ISO output: "2006-01-02 15:04:05.999999"
// plus, for timestamptz, an offset of hours or hours:minutes.
func parseTimestamp(text string, zoned bool) (time.Time, bool) {
	layouts := []string{"2006-01-02 15:04:05.999999"}
	if zoned {
		layouts = []string{"2006-01-02 15:04:05.999999-07", "2006-01-02 15:04:05.999999-07:00", "2006-01-02 15:04:05.999999-07:00:00"}
	}
	for _, l := range layouts {
		if ts, err := time.Parse(l, text); err == nil {
			return ts.UTC(), true
		}
	}
	return time.Time{}, false
}
