package routes

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSideName: derived names fit the limit, are valid UTF-8 (a cut never
// splits a rune), differ for bases that differ only past the cut, never
// equal the base, and are left whole when they fit.
func TestSideName(t *testing.T) {
	limits := map[string]Limit{"63 bytes": Bytes(63), "64 runes": Runes(64)}
	bases := []string{"", "t", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("ü", 31), strings.Repeat("ü", 31) + "x",
		strings.Repeat("名", 21), strings.Repeat("名", 64), strings.Repeat("😀", 16)}
	affixes := [][2]string{{"", "_pkey"}, {"", "__current"}, {"_weir_stage_", "_12345678"}, {"", ""}}
	for lname, fits := range limits {
		for _, a := range affixes {
			seen := map[string]string{}
			for _, b := range bases {
				got := SideName(a[0], b, a[1], fits)
				if !fits(got) || !utf8.ValidString(got) || !strings.HasPrefix(got, a[0]) || !strings.HasSuffix(got, a[1]) {
					t.Errorf("%s: SideName(%q, %q, %q) = %q: does not fit, is not UTF-8, or lost an affix", lname, a[0], b, a[1], got)
				}
				if fits(a[0]+b+a[1]) && got != a[0]+b+a[1] {
					t.Errorf("%s: %q fits but became %q", lname, a[0]+b+a[1], got)
				}
				if b != "" && a != [2]string{} && got == b {
					t.Errorf("%s: SideName of %q is the base itself", lname, b)
				}
				if other, dup := seen[got]; dup {
					t.Errorf("%s: %q and %q both became %q", lname, other, b, got)
				}
				seen[got] = b
			}
			x, y := SideName(a[0], strings.Repeat("b", 70)+"1", a[1], fits), SideName(a[0], strings.Repeat("b", 70)+"2", a[1], fits)
			if x == y {
				t.Errorf("%s: names differing past the cut collide: %q", lname, x)
			}
		}
	}
}
