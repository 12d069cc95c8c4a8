package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/weirhq/weir/routes"
)

func TestExitCode(t *testing.T) {
	locked := &routes.LockedError{Table: "public.t", RunID: "abc"}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"done", nil, ExitOK},
		{"failure", errors.New("boom"), ExitFailure},
		{"bad input", routes.BadInput("no table"), ExitBadInput},
		{"unsupported", fmt.Errorf("task x: %w: log_based into iceberg://…", routes.ErrUnsupported), ExitBadInput},
		{"probe error", fmt.Errorf("t: %w", &routes.ProbeError{Table: "t", Problem: "no such table"}), ExitBadInput},
		{"locked", fmt.Errorf("copy: %w", locked), ExitTempFail},
		{"all tables locked", errors.Join(locked, locked), ExitTempFail},
		{"locked and failed", errors.Join(locked, errors.New("boom")), ExitFailure},
		{"locked and bad input", errors.Join(locked, routes.BadInput("x")), ExitBadInput},
		{"cancelled", context.Canceled, ExitFailure},
		{"explicit", &ExitCodeError{Code: 3, Err: errors.New("x")}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := exitCode(tc.err); got != tc.want {
				t.Fatalf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}

func TestTransferCmd_BadFlagsExit2(t *testing.T) {
	root := newRoot()
	root.SetArgs([]string{"transfer", "a", "b", "--parallel", "many"})
	root.SetOut(new(nopWriter))
	root.SetErr(new(nopWriter))
	if got := exitCode(root.Execute()); got != ExitBadInput {
		t.Fatalf("bad flag exits %d, want %d", got, ExitBadInput)
	}
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
