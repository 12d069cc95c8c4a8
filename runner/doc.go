// Package runner executes the tasks of a dagfile: `weir once --task T`
// runs one batch of one task, `weir run` loops over the DAG in dependency
// order, `weir status` and `weir reset` read and move the tasks' offsets.
//
// A transfer task is routes.Copy per table, incremental past the
// destination's watermark for append and merge (incremental.Watermark).
//
// A model task is a Kafka-style consumer group over its source tables
// (incremental.Consumer): each run polls what is past the offsets the task
// committed into its sink, registers each batch in embedded DuckDB (package
// duck) as a view — input, or the names of sources: — runs the SQL,
// checks the contract (bad rows to <sink>__quarantine), and writes the
// result to the sink through the sink's Stage, whose Commit saves the new
// offsets in the same atomic step as the rows. Batches stay Arrow all the
// way: source stream → DuckDB view → DuckDB result → Stage.Write.
//
// The offsets are never stored anywhere else, so a run killed at any point
// re-reads exactly the batch it did not commit; see incremental.StateKey
// for the state layout and docs/runner.md for the whole design.
package runner
