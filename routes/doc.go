// Package routes is weir's mesh: the small interfaces every adapter implements
// (Source, Destination, Stage, Stream), URL parsing with secrets redacted, the
// scheme registry, and the pipes that move Arrow batches (or native wire bytes
// when both sides speak them) from a source to a destination's staging object.
//
// Adapters (routes/postgres, routes/mysql, …) register themselves by URL scheme
// in init, like database/sql drivers, and never import each other. Optional
// capabilities (NativeStream, NativeWriter, StateReader) are separate
// interfaces found with As, so a small adapter stays small.
package routes
