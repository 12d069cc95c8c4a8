package routes

import (
	"fmt"
	"os"
	"sync"
)

// CheckpointEnv names the phase at which a test wants this process to stop:
// the fault suite starts weir as a child with WEIR_FAULT_PAUSE=before-commit,
// waits for the line "weir: paused at before-commit" on stderr, and kills it.
// Production runs never set it.
const CheckpointEnv = "WEIR_FAULT_PAUSE"

var pauseAt = sync.OnceValue(func() string { return os.Getenv(CheckpointEnv) })

// Checkpoint marks a named phase (probe, copy, before-commit, commit). When
// the test hook names this phase, it says so on stderr and blocks forever.
func Checkpoint(phase string) {
	if p := pauseAt(); p == "" || p != phase {
		return
	}
	fmt.Fprintf(os.Stderr, "weir: paused at %s\n", phase)
	select {}
}
