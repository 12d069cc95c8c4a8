package main

import (
	"fmt"
	"os"
	"time"

	"github.com/weirhq/weir/routes"
)

// startProgress draws a live line on stderr (rows, MB/s, elapsed) when
// stderr is a terminal; schedulers' logs get only the final summary.
func startProgress(p *routes.Progress) (stop func()) {
	fi, err := os.Stderr.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(os.Stderr, "\r\033[K")
				return
			case <-t.C:
				rows, bytes := p.Snapshot()
				secs := time.Since(start).Seconds()
				fmt.Fprintf(os.Stderr, "\r\033[K%d rows  %s  %.1f MB/s  %.0fs", rows, humanBytes(bytes), float64(bytes)/1e6/secs, secs)
			}
		}
	}()
	return func() { close(done); <-finished }
}
