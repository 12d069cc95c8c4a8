package routes

import "fmt"

// StateTableName is the table every SQL destination keeps its watermarks
// and positions in, one per schema (database, dataset).
const StateTableName = "_weir_state"

// CheckDestTable refuses a destination table weir must not write under
// its name:
//   - one named like weir's state table: a replace would swap the user's
//     rows in for the watermarks of every table in that schema (MySQL and
//     ClickHouse swap with DDL, before the state write that then fails),
//     and the next append of each re-reads or fails; a backfill's plan and
//     buckets are state rows of that table;
//   - a table or schema name the destination's server does not hold as it
//     is (fits, its IdentLimit): PostgreSQL cuts a longer name to 63 bytes
//     with only a notice, so the write lands in (a replace drops) the table
//     named by its first 63 bytes, maybe the user's; MariaDB refuses it only
//     at the commit.
//
// Copy asks it of every destination table, and weir backfill and weir
// worker at probe.
func CheckDestTable(dest TableRef, fits Limit) error {
	if dest.Name == StateTableName {
		return &ProbeError{Table: dest.String(), Problem: fmt.Sprintf("%s is the name of weir's state table, which holds the watermarks of every table in %q", StateTableName, dest.Schema),
			Hint: "name another destination table with --dest-table"}
	}
	for _, n := range []string{dest.Schema, dest.Name} {
		if !fits(n) {
			return &ProbeError{Table: dest.String(), Problem: fmt.Sprintf("%q (%d bytes) is longer than the destination server's identifier limit: the server would cut it, onto another table's name, or refuse it", n, len(n)),
				Hint: "name a shorter destination table with --dest-table (or schema with --dest-schema)"}
		}
	}
	return nil
}
