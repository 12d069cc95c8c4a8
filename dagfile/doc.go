// Package dagfile parses and validates weir.yaml, the dagfile: connections,
// defaults, a schedule and tasks (transfer, model, stream) with their
// dependencies, contracts and tags.
//
// Every problem is reported at once, as an [ErrorList] of [*Error] values that
// name the file, line, column and key and say what is allowed:
//
//	weir.yaml:14:7: tasks.silver.model.mode: bad mode "upsret" (did you mean "upsert"?); allowed: append, upsert, replace
//
// Dependencies are the explicit deps plus lineage: a task that reads a table
// (a model or stream source, or a transfer's from table) that another task
// writes (its sink or dest table) depends on that task. [File.Order] gives a
// deterministic topological order and [File.Select] narrows the tasks by name,
// tag or kind. [Lint] and [Check] report rule findings (DAG-*, STREAM-*) for
// `weir lint`.
//
// Connections may use ${VAR} references. [Load] expands them from the
// environment (an unset variable is an error naming it); [LoadStatic] keeps
// them unexpanded, for tools such as `weir generate` and `weir lint` that must
// not need (or bake in) secrets. The expanded value is only returned by
// [Connection.URL]; it never appears in an error, a String or a GoString.
//
// The format is documented in docs/dagfile.md.
package dagfile
