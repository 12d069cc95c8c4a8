package main

import "testing"

func TestSlotWALWarn_Set(t *testing.T) {
	for in, want := range map[string]int64{"4GiB": 4 << 30, "512MiB": 512 << 20, "1.5 GiB": 3 << 29, "1000": 1000, "10B": 10} {
		var v slotWALWarn
		if err := v.Set(in); err != nil || int64(v) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, v, err, want)
		}
	}
	for _, in := range []string{"", "x", "-1GiB", "0", "4GB"} {
		var v slotWALWarn
		if err := v.Set(in); err == nil {
			t.Errorf("Set(%q) = %d, want an error", in, v)
		}
	}
}
