package pgwal

import (
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

// value turns pgoutput's text output of column i into the change value
// every destination reads the same way the bulk route writes it: booleans
// as bool, bytea as []byte, timestamps as time.Time (UTC), intervals as
// the bulk route's arrow.MonthDayNanoInterval (each destination prints it
// as it prints the bulk route's: ClickHouse ISO 8601, MySQL and Iceberg
// PostgreSQL's text); an interval the bulk route cannot hold (over ±292
// years of microseconds) is the bulk route's error. Everything else
// stays the type's text output (ok false), which the postgres destination
// takes as is and the others parse as the bulk route's text. A text the
// parse does not understand (infinity, BC dates) stays text.
func (t *table) value(i int, text string) (v any, ok bool, err error) {
	if t.Info == nil || i >= len(t.Info.Columns) {
		return nil, false, nil
	}
	switch typ := t.Info.Columns[i].Type.(type) {
	case *arrow.BooleanType:
		switch text {
		case "t":
			return true, true, nil
		case "f":
			return false, true, nil
		}
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		if b, err := hex.DecodeString(strings.TrimPrefix(text, `\x`)); err == nil {
			return b, true, nil
		}
	case *arrow.TimestampType:
		if ts, ok := parseTimestamp(text, typ.TimeZone != ""); ok {
			return ts, true, nil
		}
	case *arrow.MonthDayNanoIntervalType:
		iv, err := routes.ParseInterval(text)
		if err != nil {
			return nil, false, fmt.Errorf("column %s: %w", t.Info.Columns[i].Name, err)
		}
		return iv, true, nil
	}
	return nil, false, nil
}

// textOnly refuses a column whose changes value carries only as
// PostgreSQL's text output of a type no other destination parses: an
// array ('{1,2}', '{"a b",NULL}'), which the bulk route writes as a list
// (JSON in MySQL/MariaDB, Array in ClickHouse) and a change cannot.
// destScheme is the destination's URL scheme; a postgres one takes the
// text as it is.
func textOnly(table routes.TableRef, c routes.Column, destScheme string) error {
	if _, list := c.Type.(arrow.ListLikeType); !list || destScheme == "postgres" || destScheme == "postgresql" {
		return nil
	}
	return &routes.ProbeError{Table: table.String(), Column: c.Name,
		Problem: "a PostgreSQL array: log_based carries its changes as PostgreSQL's array text, which only a postgres destination takes (" + destScheme + " does not)",
		Hint:    "capture the table into a postgres destination, copy it with --mode replace, append or merge (they carry arrays), or capture a view without the column"}
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
