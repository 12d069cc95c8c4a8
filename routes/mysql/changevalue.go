package mysql

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/weirhq/weir/routes"
)

// ChangeValues holds a binlog capture to the bulk read's rules for
// temporal values and tinyint(1) (0 or 1; checkBool): go-mysql hands DATE, DATETIME, TIMESTAMP and TIME over
// as the same text a SELECT returns, and Check parses it with the bulk
// read's parsers, so a change is refused, or read as NULL, exactly where a
// bulk read of the row would be, with the same message and hint. Without
// it a destination that parses loosely (ClickHouse: '2024-02-00' as day 0)
// stored what another refused.
type ChangeValues struct {
	table string
	cols  []routes.Column
	kinds []kind
	opts  options
}

// NewChangeValues reads the source URL's read options (zero_dates, time)
// and the kinds of the table's probed columns.
func NewChangeValues(sourceURL string, table routes.TableRef, cols []routes.Column) (*ChangeValues, error) {
	u, err := routes.ParseURL(sourceURL)
	if err != nil {
		return nil, err
	}
	opts, err := parseOptions(u.URL().Query())
	if err != nil {
		return nil, err
	}
	c := &ChangeValues{table: table.String(), cols: cols, kinds: make([]kind, len(cols)), opts: opts}
	for i, col := range cols {
		c.kinds[i], _ = columnKind(parseColumnType(col.NativeType), opts)
	}
	return c, nil
}

// Check returns what the bulk read makes of v, the binlog value of column
// i: v itself, nil for a zero date under zero_dates=null, or the bulk
// read's error (a *routes.ProbeError naming the table, column and fix).
func (c *ChangeValues) Check(i int, v any) (any, error) {
	if !c.Checks(i) {
		return v, nil
	}
	if c.kinds[i] == kindBool {
		return v, c.checkBool(i, v)
	}
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	var err error
	switch c.kinds[i] {
	case kindDate:
		_, err = parseDate([]byte(s))
	case kindDatetime:
		_, err = parseDatetime([]byte(s))
	case kindTime:
		var us int64
		if us, err = parseTime([]byte(s)); err == nil && (us < 0 || us > 24*3600*1e6) {
			err = errTimeRange
		}
	case kindDuration:
		_, err = parseTime([]byte(s))
	default:
		return v, nil
	}
	switch {
	case err == nil:
		return v, nil
	case errors.Is(err, errZeroDate) && c.opts.zeroDatesNull:
		return nil, nil
	}
	return nil, valueErr(c.table, c.cols[i], s, err)
}

// Checks reports whether Check can change or refuse column i's values:
// a decoder that makes them itself skips Check for the other columns.
func (c *ChangeValues) Checks(i int) bool {
	if i >= len(c.kinds) {
		return false
	}
	switch c.kinds[i] {
	case kindBool, kindDate, kindDatetime, kindTime, kindDuration:
		return true
	}
	return false
}

// checkBool refuses a tinyint(1) value other than 0 and 1, as the bulk
// read does (errNotBool): the binlog hands it over as an integer, which a
// destination's boolean would hold as true.
func (c *ChangeValues) checkBool(i int, v any) error {
	n, ok := v.(int8) // tinyint(1), signed: unsigned is not read as boolean
	if !ok || n == 0 || n == 1 {
		return nil
	}
	return valueErr(c.table, c.cols[i], strconv.Itoa(int(n)), errNotBool)
}

// valueErr names the table, column and value, and for the known data
// problems says how to read the table anyway.
func valueErr(table string, c routes.Column, shown string, err error) error {
	pe := &routes.ProbeError{Table: table, Column: c.Name, Problem: fmt.Sprintf("value %q of type %s", shown, c.NativeType), Err: err}
	switch {
	case errors.Is(err, errZeroDate):
		pe.Hint = fmt.Sprintf("MySQL's zero dates have no date value: add ?%s=null to the source URL to read them as NULL, or fix the rows (UPDATE %s SET %s = NULL WHERE %s = '0000-00-00')", ParamZeroDates, table, quoteIdent(c.Name), quoteIdent(c.Name))
	case errors.Is(err, errNotBool):
		pe.Hint = fmt.Sprintf("tinyint(1) reads as boolean; add ?%s=int to the source URL to read it as a small integer", ParamTinyint1)
	case errors.Is(err, errTimeRange):
		pe.Hint = fmt.Sprintf("TIME reads as a time of day; add ?%s=duration to the source URL to read it as a duration (±838:59:59)", ParamTime)
	}
	return pe
}
