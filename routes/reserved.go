package routes

import "fmt"

// StateTableName is the table every SQL destination keeps its watermarks
// and positions in, one per schema (database, dataset).
const StateTableName = "_weir_state"

// NotWeirs refuses a destination table named like weir's state table: a
// replace would swap the user's rows in for the watermarks of every table
// in that schema (MySQL and ClickHouse swap with DDL, before the state
// write that then fails), and the next append of each re-reads or fails;
// a backfill's plan and buckets are state rows of that table. Copy asks it
// of every destination table, and weir backfill and weir worker at probe.
func NotWeirs(dest TableRef) error {
	if dest.Name != StateTableName {
		return nil
	}
	return &ProbeError{Table: dest.String(), Problem: fmt.Sprintf("%s is the name of weir's state table, which holds the watermarks of every table in %q", StateTableName, dest.Schema),
		Hint: "name another destination table with --dest-table"}
}
