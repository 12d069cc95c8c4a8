package routes

import "testing"

func TestClockMicros(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"00:00:00", 0, true},
		{"838:59:59", 3020399000000, true},
		{"-838:59:59", -3020399000000, true},
		{"-00:00:00.000001", -1, true},
		{"25:00:00.5", 90000500000, true},
		{"01:02:03.1234567", 0, false}, // a seventh fraction digit
		{"01:60:00", 0, false},
		{"01:02", 0, false},
		{"01:02:03.", 0, false},
		{"1:2:3", 0, false},
		{"", 0, false},
		{"--01:00:00", 0, false},
	} {
		got, ok := ClockMicros(tt.in)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("ClockMicros(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
