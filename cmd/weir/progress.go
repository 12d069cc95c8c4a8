package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/weirhq/weir/routes"
)

// Progress modes (--progress). auto is tty on a terminal, plain elsewhere
// (a scheduler's log), so a long run is never silent until it ends.
const (
	progressAuto  = "auto"
	progressTTY   = "tty"
	progressPlain = "plain"
	progressJSON  = "json"
	progressOff   = "off"
)

// ttyInterval is how often the terminal line is redrawn.
const ttyInterval = time.Second

// progressEvent is one --progress=json line on stderr (docs/progress.md is
// the schema). Estimates are pointers: absent when the probe gave none.
type progressEvent struct {
	Type     string   `json:"type"` // always "progress"
	Time     string   `json:"time"` // RFC 3339, UTC
	RunID    string   `json:"run_id"`
	Table    string   `json:"table"`
	Rows     int64    `json:"rows"`
	Bytes    int64    `json:"bytes"`
	RowsPerS float64  `json:"rows_per_s"`
	MBPerS   float64  `json:"mb_per_s"`
	PctEst   *float64 `json:"pct_est,omitempty"`   // 0–99 while running; 100 only in a done line of a run that succeeded
	ETAEstS  *float64 `json:"eta_est_s,omitempty"` // seconds left at the average rate
	Elapsed  float64  `json:"elapsed_s"`
	Done     bool     `json:"done"`
	OK       *bool    `json:"ok,omitempty"` // set in the done line
}

// progressEventAt builds the event for stats taken elapsed after the start.
// A running transfer never shows 100%: past the estimate it shows 99% and
// no ETA, since the estimate was low.
func progressEventAt(s routes.ProgressStats, runID string, elapsed time.Duration, now time.Time) progressEvent {
	secs := max(elapsed.Seconds(), 1e-3)
	ev := progressEvent{
		Type: "progress", Time: now.UTC().Format(time.RFC3339), RunID: runID, Table: s.Table,
		Rows: s.Rows, Bytes: s.Bytes,
		RowsPerS: round1(float64(s.Rows) / secs), MBPerS: round1(float64(s.Bytes) / 1e6 / secs),
		Elapsed: round1(elapsed.Seconds()),
	}
	if s.Estimate > 0 {
		pct := min(math.Floor(float64(s.Rows)*1000/float64(s.Estimate))/10, 99)
		ev.PctEst = &pct
		if s.Rows > 0 && s.Rows < s.Estimate {
			eta := math.Round(float64(s.Estimate-s.Rows) / (float64(s.Rows) / secs))
			ev.ETAEstS = &eta
		}
	}
	return ev
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

// ttyLine is the terminal line: estimates marked with ~.
func (ev progressEvent) ttyLine() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s rows  %s rows/s  %.1f MB/s", groupDigits(ev.Rows), groupDigits(int64(ev.RowsPerS)), ev.MBPerS)
	if ev.PctEst != nil {
		fmt.Fprintf(&b, "  ~%.0f%%", *ev.PctEst)
	}
	if ev.ETAEstS != nil {
		fmt.Fprintf(&b, "  eta ~%s", time.Duration(*ev.ETAEstS)*time.Second)
	}
	fmt.Fprintf(&b, "  %s", time.Duration(ev.Elapsed)*time.Second)
	if ev.Table != "" {
		fmt.Fprintf(&b, "  %s", ev.Table)
	}
	return b.String()
}

// plainLine is the key=value line for a log that is not a terminal.
func (ev progressEvent) plainLine() string {
	pct, eta := "unknown", "unknown"
	if ev.PctEst != nil {
		pct = fmt.Sprintf("%.1f", *ev.PctEst)
	}
	if ev.ETAEstS != nil {
		eta = (time.Duration(*ev.ETAEstS) * time.Second).String()
	}
	line := fmt.Sprintf("progress run_id=%s table=%s rows=%d rows_per_s=%.0f mb_per_s=%.1f pct_est=%s eta_est=%s elapsed=%s",
		ev.RunID, ev.Table, ev.Rows, ev.RowsPerS, ev.MBPerS, pct, eta, (time.Duration(ev.Elapsed*10) * time.Second / 10))
	if ev.Done {
		line += fmt.Sprintf(" done=true ok=%t", *ev.OK)
	}
	return line
}

func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// progressConfig is what the global flags choose.
type progressConfig struct {
	mode     string
	interval time.Duration // plain and json lines; the terminal's is ttyInterval, or this when shorter
}

func (c progressConfig) validate() error {
	switch c.mode {
	case progressAuto, progressTTY, progressPlain, progressJSON, progressOff:
	default:
		return routes.BadInput("--progress %q: use auto, tty, plain, json or off", c.mode)
	}
	if c.interval <= 0 {
		return routes.BadInput("--progress-interval %s: must be positive", c.interval)
	}
	return nil
}

// resolve turns auto into tty or plain by whether w is a terminal.
func (c progressConfig) resolve(w io.Writer) string {
	if c.mode != progressAuto {
		return c.mode
	}
	if isTerminal(w) {
		return progressTTY
	}
	return progressPlain
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// startProgress reports p on w until stop, which ends the report: a tty
// line is cleared; plain and json write a last line (done, and whether the
// run succeeded) when they wrote any, so a run that fails at once or ends
// within one interval adds nothing to its summary.
func startProgress(p *routes.Progress, runID string, cfg progressConfig, w io.Writer) (stop func(error)) {
	mode := cfg.resolve(w)
	if mode == progressOff {
		return func(error) {}
	}
	interval := cfg.interval
	if mode == progressTTY {
		// Redrawn every second, or more often when a shorter
		// --progress-interval asks for it.
		interval = min(cfg.interval, ttyInterval)
	}
	start := time.Now()
	var mu sync.Mutex // one line at a time
	var wrote bool    // a periodic line was written (under mu)
	emit := func(done bool, err error) {
		stats := p.Stats()
		if !done && stats.Table == "" {
			return // no table probed yet: a line would say nothing (table=, rows=0)
		}
		ev := progressEventAt(stats, runID, time.Since(start), time.Now())
		if done {
			ok := err == nil
			ev.Done, ev.OK = true, &ok
			if ok && ev.PctEst != nil {
				*ev.PctEst = 100
			}
			ev.ETAEstS = nil
		}
		mu.Lock()
		defer mu.Unlock()
		if done && !wrote && mode != progressTTY {
			return
		}
		wrote = true
		switch mode {
		case progressTTY:
			if done {
				fmt.Fprint(w, "\r\033[K")
			} else {
				fmt.Fprint(w, "\r\033[K"+ev.ttyLine())
			}
		case progressPlain:
			fmt.Fprintln(w, ev.plainLine())
		case progressJSON:
			b, _ := json.Marshal(ev)
			fmt.Fprintf(w, "%s\n", b)
		}
	}
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				emit(false, nil)
			}
		}
	}()
	return func(err error) {
		close(quit)
		<-finished
		emit(true, err)
	}
}
