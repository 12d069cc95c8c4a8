package clickhouse

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestTimeConv_Infinity: PostgreSQL's ±infinity into DateTime is refused
// as infinite, not as a fraction subseconds=truncate would drop (it does
// not apply), with or without truncate.
func TestTimeConv_Infinity(t *testing.T) {
	for _, v := range []int64{math.MaxInt64, math.MinInt64} {
		for _, truncate := range []bool{false, true} {
			c := timeConv{from: 6, to: 0, truncate: truncate, dateTime: true, maxDateTime: maxDateTimeOld}
			_, err := c.convert(v)
			if err == nil || !strings.Contains(err.Error(), "infinity") || strings.Contains(err.Error(), "subseconds") {
				t.Errorf("convert(%d, truncate %v) = %v, want an infinity error without the subseconds hint", v, truncate, err)
			}
		}
	}
}

// TestCellText_DateRange: CDC text for Date and DateTime columns is held
// to the bulk encoders' ranges (ClickHouse's parser wrapped 1000-01-01 to
// 1970-01-01); infinity is refused as such.
func TestCellText_DateRange(t *testing.T) {
	old := Options{maxDate: maxDateOld, maxDateTime: maxDateTimeOld, Subseconds: "truncate"}
	tests := []struct {
		v, typ, err string // err: a substring of the error, "" for none
	}{
		{"2024-01-02", "Date", ""},
		{"2105-12-31", "Nullable(Date)", ""},
		{"1970-01-01", "Date", ""},
		{"1000-01-01", "Date", "outside the ClickHouse Date range"},
		{"9999-12-31", "Nullable(Date)", "outside the ClickHouse Date range"},
		{"2106-01-01", "Date", "outside the ClickHouse Date range"},
		{"1900-01-01", "Date32", ""},
		{"1899-12-31", "Date32", "outside the ClickHouse Date32 range"},
		{"2024-01-02 03:04:05", "DateTime", ""},
		{"2024-01-02 03:04:05.5+00", "DateTime('UTC')", ""},
		{"1969-12-31 23:59:59", "DateTime", "outside the range of this server's DateTime"},
		{"2106-02-07 06:28:15", "DateTime", "outside the range of this server's DateTime"},
		{"infinity", "Nullable(DateTime)", "no ClickHouse DateTime value"},
		{"-infinity", "Date", "no ClickHouse Date value"},
		{"0044-03-15 BC", "Date", "no ClickHouse Date value"},
		{"whatever", "String", ""},
		{"5e-324", "Float64", ""},
		{"-2.2250738585072e-308", "Nullable(Float64)", ""},
		{"1.1754944e-38", "Float32", ""},
		{"x", "Float64", "not a Float64"},
		{"2.2250738585072014e-308", "Float64", ""},
		{"-0", "Float64", ""},
		{"NaN", "Float64", ""},
		{"1000-01-01 00:00:00", "DateTime64(6)", ""}, // DateTime64's range is checked by ClickHouse's cast
	}
	for _, tt := range tests {
		_, _, err := cellText(tt.v, tt.typ, old)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s into %s: %v, want it accepted", tt.v, tt.typ, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s into %s: %v, want %q", tt.v, tt.typ, err, tt.err)
		}
	}
}

// TestCellText_TimeRange: a change value that is a time.Time (pgoutput's
// timestamps, decoded by cdc/pgwal) is held to the same ranges as text.
// Attack s14: 0001-01-01 and 1800-01-01 into DateTime landed as
// 1970-01-01 00:00:00, exit 0 (ClickHouse 18.16's parser wraps them).
func TestCellText_TimeRange(t *testing.T) {
	old := Options{maxDate: maxDateOld, maxDateTime: maxDateTimeOld, Subseconds: "truncate"}
	at := func(s string) time.Time {
		v, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		v, typ, err string
	}{
		{"2024-01-02 03:04:05", "DateTime", ""},
		{"1970-01-01 00:00:00", "Nullable(DateTime('UTC'))", ""},
		{"0001-01-01 00:00:00", "DateTime", "outside the range of this server's DateTime"},
		{"1800-01-01 00:00:00", "Nullable(DateTime('UTC'))", "outside the range of this server's DateTime"},
		{"1969-12-31 23:59:59", "DateTime", "outside the range of this server's DateTime"},
		{"2106-02-07 06:28:15", "DateTime", "outside the range of this server's DateTime"},
		{"1000-01-01 00:00:00", "Date", "outside the ClickHouse Date range"},
		{"2024-01-02 00:00:00", "Date", ""},
	}
	for _, tt := range tests {
		_, _, err := cellText(at(tt.v), tt.typ, old)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s into %s: %v, want it accepted", tt.v, tt.typ, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s into %s: %v, want %q", tt.v, tt.typ, err, tt.err)
		}
	}
}
