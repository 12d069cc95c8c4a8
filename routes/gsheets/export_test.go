package gsheets

import (
	"testing"
	"time"
)

// SetBackoff shortens the first retry wait for a test.
func SetBackoff(t testing.TB, d time.Duration) {
	old := firstBackoff
	firstBackoff = d
	t.Cleanup(func() { firstBackoff = old })
}
