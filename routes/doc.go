// Package routes is weir's mesh: the small interfaces every adapter implements
// (Source, Destination, Stage, Stream), URL parsing with secrets redacted, the
// scheme registry, and the pipes that move Arrow batches (or native wire bytes
// when both sides speak them) from a source to a destination's staging object.
//
// Adapters (routes/postgres, routes/mysql, …) register themselves by URL scheme
// in init with RegisterScheme, like database/sql drivers, saying whether the
// scheme opens as a source, a destination and which modes it takes: the
// routes matrix (routes.Matrix, `weir routes`, docs/routes.md) is derived from
// that, and the matrix test fails for a scheme without a fixture. Adapters
// never import each other. Optional
// capabilities (NativeStream, NativeWriter, StateReader) are separate
// interfaces found with As, so a small adapter stays small.
//
// # Writing an adapter
//
// What a new adapter must do; routestest.RunSourceTests and
// RunDestinationTests check the starred items against a real server, and
// routes/objstore is the smallest complete example.
//
// Every adapter:
//   - registers in init with RegisterScheme (roles, and the modes besides
//     replace it takes), and is imported by routes/all;
//   - opens from a URL (Factory) without printing a secret: errors name the
//     endpoint with Redact or URL.Identity;
//   - has a fixture package <adapter>test implementing routestest.Fixture,
//     listed in the root routes_matrix_test.go, and a TestContract that
//     opts in to the suite (about ten lines; see routes/postgres).
//
// A Source:
//   - Probe: columns with their Arrow and native types, primary key, row
//     estimate, and SourceID = the URL's Identity + "#" + table; a missing
//     table or an unreadable type is a *ProbeError (exit 2) naming the
//     table (*);
//   - Plan: ranges that together cover every row exactly once — NULL
//     keys, repeated values and a table with no key included (*). A plan
//     may hold more ranges than PlanOptions.Pipes (PostgreSQL makes up to
//     four per pipe, so no pipe idles); an SQL source leaves its first and
//     last range open-ended, so rows added after planning are read;
//   - Read: nothing is read before the first Next; it honours Columns,
//     the After/Until window on Cursor, ChunkBytes and Allocator (every
//     Arrow buffer from it, all released by the stream's Release (*)); on
//     cancel Next returns false, Err the context's error, and no
//     goroutine is left (*). Embed *Batches for the producer goroutine
//     and the mid-copy checkpoint; streams implement Counter;
//   - for append and merge from it: CursorSource and NullCounter;
//     optionally TableLister (--schema, did you mean), KeysetSource
//     (stream table sources) and where.Pushdown (weir read --where).
//
// A Destination:
//   - Prepare takes the table's lock before any row moves: a table held
//     by another live run is a *LockedError naming the holder's RunID (*),
//     and a dead run's lock does not outlive it for long (a session lock
//     ends with the session, a lease expires); it creates the staging object
//     named with SideName (prefix _weir_stage_, the run id), refuses a
//     user object where weir would create its own (Occupied) and, with
//     WriteOptions.Fresh, an existing table;
//   - Stage.Write is called once per pipe, concurrently; it releases (or
//     never retains) what it reads, allocating with WriteOptions.Allocator
//     (*). The SQL destinations (postgres, mysql, clickhouse) encode
//     straight from the batches and allocate no Arrow memory;
//   - Stage.Commit makes the rows visible and saves the State, as one
//     atomic step, calling Checkpoint("commit") inside that step and
//     returning its error (*): after a failure there the table and its
//     state are both the old ones or both the new ones (*);
//   - Stage.Abort leaves the previous table whole (*), releases the lock,
//     and is a no-op after Commit (*);
//   - StateReader: LoadState returns exactly the State the last commit
//     saved for that source, RunID and Rows included, and nothing for a
//     source that never committed (*); a SharedDestination (a backfill's)
//     is also a StateLister: every state of a table in one read, so a
//     model over it reads only what the plan under way committed whole;
//   - a Prober and a CursorSource (every Source is a Prober; a
//     destination that cannot be read implements just Probe and
//     MaxCursor), so a copy refuses the source table itself and append
//     with no saved state starts from the destination's own maximum;
//   - for append and merge into an existing table (and a CDC replica or
//     log), refuses in Prepare a source type the table's column does not
//     hold exactly: it maps its own type names to a ColumnType and asks
//     Holds (the one lossy-cast rule), refusing with LossyError;
//   - implements IdentLimiter when the server limits identifier length,
//     JointStage when it can commit two stages in one transaction, and
//     cdc.Applier to be a log_based (CDC) target. (Copy, not the adapter,
//     refuses a destination table named StateTableName.)
package routes
