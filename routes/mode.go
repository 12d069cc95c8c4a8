package routes

import "fmt"

// Mode says how a commit treats the destination table.
type Mode string

// The transfer modes (docs/architecture.md).
const (
	ModeReplace  Mode = "replace"   // swap in a full copy atomically
	ModeAppend   Mode = "append"    // add rows past the watermark
	ModeMerge    Mode = "merge"     // upsert the delta by key
	ModeLogBased Mode = "log_based" // apply a CDC window
)

// ParseMode validates a mode name; empty means replace.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return ModeReplace, nil
	case ModeReplace, ModeAppend, ModeMerge, ModeLogBased:
		return m, nil
	}
	return "", fmt.Errorf("%w: unknown mode %q (use replace, append, merge or log_based)", ErrBadInput, s)
}
