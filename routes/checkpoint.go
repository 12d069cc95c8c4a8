package routes

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// CheckpointEnv names the phase at which a test wants this process to stop:
// the fault suite starts weir as a child with WEIR_FAULT_PAUSE=before-commit,
// waits for the line "weir: paused at before-commit" on stderr, and kills it.
// Production runs never set it.
const CheckpointEnv = "WEIR_FAULT_PAUSE"

// ResumeEnv, when set with CheckpointEnv, names a file: a paused process
// goes on once that file exists (the fault suite changes the source while
// a run is paused, then lets it finish). Without it a pause lasts forever.
const ResumeEnv = "WEIR_FAULT_RESUME"

var pauseAt = sync.OnceValue(func() string { return os.Getenv(CheckpointEnv) })

// hook is the in-process test seam (SetCheckpointHook); nil in production.
var hook atomic.Pointer[func(phase string) error]

// SetCheckpointHook makes every Checkpoint call fn with its phase and fail
// with fn's error; nil removes the hook. It returns a func that puts the
// previous hook back. Tests only: it is the one in-process fault seam, as
// CheckpointEnv is the one for a child process.
func SetCheckpointHook(fn func(phase string) error) (restore func()) {
	var p *func(string) error
	if fn != nil {
		p = &fn
	}
	old := hook.Swap(p)
	return func() { hook.Store(old) }
}

// Checkpoint marks a named phase. Phases: probe, mid-copy (a pipe has
// handed its first batch to the destination and asks for the next),
// before-commit, commit (inside the destination's commit, before it is
// durable), after-commit (committed, the report not yet printed); the
// runner adds poll and before-quarantine-commit; CDC adds apply-<stage>
// and bootstrap stages (cdc/pgwal, cdc/binlog). A hook set by a test
// (SetCheckpointHook) sees every phase and its error fails the step that
// reached it: callers return it. When CheckpointEnv names the phase, it
// says so on stderr and blocks until killed, or until the ResumeEnv file
// exists.
func Checkpoint(phase string) error {
	if h := hook.Load(); h != nil {
		if err := (*h)(phase); err != nil {
			return err
		}
	}
	if p := pauseAt(); p == "" || p != phase {
		return nil
	}
	fmt.Fprintf(os.Stderr, "weir: paused at %s\n", phase)
	resume := os.Getenv(ResumeEnv)
	if resume == "" {
		select {}
	}
	for {
		if _, err := os.Stat(resume); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}
