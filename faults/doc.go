// Package faults is weir's fault-injection suite (go test ./faults/... -run
// Fault). It runs the real weir binary as a child process and breaks it:
// SIGKILL at every phase of every destination and mode, cut and refused
// connections through a TCP proxy, a statement timeout, DDL on the source
// between and during runs, two runs racing for one table, and bad input.
// docs/failure-modes.md says what each case shows. The package holds tests
// only; this file is its documentation.
package faults
