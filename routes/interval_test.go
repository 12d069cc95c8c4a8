package routes

import (
	"errors"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestParseInterval: PostgreSQL 15's own output of each value (psql,
// IntervalStyle postgres) reads into the bulk route's value and prints
// back to the same text.
func TestParseInterval(t *testing.T) {
	type mdn = arrow.MonthDayNanoInterval
	tests := []struct {
		text string
		want mdn
	}{
		{"1 mon -1 days +00:00:00.000001", mdn{Months: 1, Days: -1, Nanoseconds: 1000}},
		{"-1 mons +1 day -00:00:00.000001", mdn{Months: -1, Days: 1, Nanoseconds: -1000}},
		{"178000000 years", mdn{Months: 2136000000}},
		{"-178000000 years", mdn{Months: -2136000000}},
		{"178956970 years 7 mons", mdn{Months: math.MaxInt32}},
		{"-178956970 years -8 mons", mdn{Months: math.MinInt32}},
		{"00:00:00", mdn{}},
		{"3 mons", mdn{Months: 3}},
		{"-5 days", mdn{Days: -5}},
		{"2147483647 days", mdn{Days: math.MaxInt32}},
		{"-2147483648 days", mdn{Days: math.MinInt32}},
		{"-1 years -2 mons +3 days -04:05:06.5", mdn{Months: -14, Days: 3, Nanoseconds: -14706500000000}},
		{"1 year 2 mons 3 days 04:05:06.789012", mdn{Months: 14, Days: 3, Nanoseconds: 14706789012000}},
		{"-1 days +02:00:00", mdn{Days: -1, Nanoseconds: 7200e9}},
		{"1 day -00:00:00.5", mdn{Days: 1, Nanoseconds: -5e8}},
		{"100:00:00", mdn{Nanoseconds: 360000e9}},
		{"2562047:47:16.854775", mdn{Nanoseconds: 9223372036854775000}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got, err := ParseInterval(tt.text)
			if err != nil || got != tt.want {
				t.Fatalf("ParseInterval = %+v, %v; want %+v", got, err, tt.want)
			}
			if back := IntervalText(got); back != tt.text {
				t.Errorf("IntervalText = %q, want %q", back, tt.text)
			}
		})
	}
	for _, bad := range []string{"", "1 fortnight", "1", "P1M", "00:00 1 day", "1.5 days", "@ 1 mon"} {
		if _, err := ParseInterval(bad); err == nil {
			t.Errorf("ParseInterval(%q): no error", bad)
		}
	}
	// PostgreSQL holds 292,471 years of microseconds; Arrow's nanoseconds
	// do not, and the bulk route refuses them too
	for _, big := range []string{"2562047788:00:54.775807", "-2562047788:00:54.775807"} {
		if _, err := ParseInterval(big); !errors.Is(err, ErrIntervalRange) {
			t.Errorf("ParseInterval(%q) = %v, want ErrIntervalRange", big, err)
		}
	}
}
