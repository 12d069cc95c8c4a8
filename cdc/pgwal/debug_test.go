package pgwal

import (
	"fmt"
	"os"
)

// WEIR_PGWAL_TRACE=1 prints the drain's idle waits (received, target).
func init() {
	if os.Getenv("WEIR_PGWAL_TRACE") != "" {
		debugf = func(f string, a ...any) { fmt.Printf(f+"\n", a...) }
	}
}
