package routes

import (
	"fmt"
	"os"
	"sync"
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

// Checkpoint marks a named phase: probe, mid-copy (a pipe has handed its
// first batch to the destination and asks for the next), before-commit,
// commit (inside the destination's commit), after-commit (committed, the
// report not yet printed); the runner adds poll and
// before-quarantine-commit. When the test hook names this phase, it says
// so on stderr and blocks until killed, or until the ResumeEnv file exists.
func Checkpoint(phase string) {
	if p := pauseAt(); p == "" || p != phase {
		return
	}
	fmt.Fprintf(os.Stderr, "weir: paused at %s\n", phase)
	resume := os.Getenv(ResumeEnv)
	if resume == "" {
		select {}
	}
	for {
		if _, err := os.Stat(resume); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
