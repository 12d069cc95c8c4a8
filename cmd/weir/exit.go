package main

import (
	"context"
	"errors"

	"github.com/weirhq/weir/routes"
)

// Exit codes (docs/architecture.md).
const (
	ExitOK       = 0
	ExitFailure  = 1
	ExitBadInput = 2
	ExitTempFail = 75 // EX_TEMPFAIL: locked by another run, retry later
)

// ExitCodeError makes a command exit with Code.
type ExitCodeError struct {
	Code int
	Err  error
}

func (e *ExitCodeError) Error() string { return e.Err.Error() }
func (e *ExitCodeError) Unwrap() error { return e.Err }

// exitCode maps an error to the process exit code. With several table
// errors, a lock alone means retry later; any bad input wins over that.
func exitCode(err error) int {
	var ec *ExitCodeError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ec):
		return ec.Code
	case errors.Is(err, routes.ErrBadInput), errors.Is(err, routes.ErrUnsupported):
		// What an adapter does not do (log_based into Iceberg, a mode a
		// destination lacks) is refused before a row moves and never
		// succeeds on a retry: the generated DAGs fail it at once.
		return ExitBadInput
	case onlyLocked(err):
		return ExitTempFail
	}
	return ExitFailure
}

func onlyLocked(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !onlyLocked(e) {
				return false
			}
		}
		return len(j.Unwrap()) > 0
	}
	return errors.Is(err, routes.ErrLocked) && !errors.Is(err, context.Canceled)
}

func redactErr(err error) string { return routes.Redact(err.Error()) }
