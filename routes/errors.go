package routes

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Sentinels callers branch on, with errors.Is.
var (
	// ErrLocked: another live run holds the destination table (exit 75).
	ErrLocked = errors.New("destination table is locked by another run")
	// ErrBadInput: the request cannot work as given (exit 2); caught before a row moves.
	ErrBadInput = errors.New("bad input")
	// ErrNotFound: a table, schema or object does not exist.
	ErrNotFound = errors.New("not found")
	// ErrUnsupported: the adapter does not do this (wraps errors.ErrUnsupported).
	ErrUnsupported = fmt.Errorf("%w", errors.ErrUnsupported)
	// ErrNoPassthrough: a native fast path declined; fall back to Arrow (like driver.ErrSkip).
	ErrNoPassthrough = errors.New("native passthrough declined")
	// ErrFenced: a FencedStage's commit found another state than the one it
	// was to replace (another worker committed that step first); nothing
	// was committed.
	ErrFenced = errors.New("commit fenced: the saved state it was to replace has changed")
)

// LockedError names the run that holds a destination table.
type LockedError struct {
	Table string    // destination table
	RunID string    // the run holding it, when known
	Since time.Time // when that run took it, when known
}

func (e *LockedError) Error() string {
	msg := fmt.Sprintf("%s is locked by another weir run", e.Table)
	if e.RunID != "" {
		msg = fmt.Sprintf("%s is locked by weir run %s", e.Table, e.RunID)
	}
	if !e.Since.IsZero() {
		msg += " since " + e.Since.UTC().Format(time.RFC3339)
	}
	return msg + "; retry when it ends"
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// ProbeError is bad input found while probing: it names the table, the column
// when there is one, the problem, and what to do.
type ProbeError struct {
	Table   string
	Column  string
	Problem string
	Hint    string
	Err     error // the underlying error, if any
}

func (e *ProbeError) Error() string {
	msg := e.Table
	if e.Column != "" {
		msg += "." + e.Column
	}
	msg += ": " + e.Problem
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *ProbeError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrBadInput) true.
func (e *ProbeError) Is(target error) bool { return target == ErrBadInput }

// BadInput wraps err as bad input (exit 2) with context.
func BadInput(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadInput}, args...)...)
}

// CheckStateColumns refuses a state table (table) that lacks one of the
// columns weir writes (want): another tool's table of that name, or one
// altered by hand. have empty means the table does not exist.
func CheckStateColumns(table TableRef, have, want []string) error {
	if len(have) == 0 {
		return nil
	}
	var missing []string
	for _, c := range want {
		if !slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, c) }) {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return BadInput("%s is not weir's state table: it has no column %s (rename that table, or write into another schema or database)", table, strings.Join(missing, ", "))
}
