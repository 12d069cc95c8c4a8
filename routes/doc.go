// Package routes is weir's mesh: the small interfaces every adapter implements
// (Source, Destination, Stage, Stream), URL parsing with secrets redacted, the
// scheme registry, and the pipes that move Arrow batches (or native wire bytes
// when both sides speak them) from a source to a destination's staging object.
//
// Adapters (routes/postgres, routes/mysql, …) register themselves by URL scheme
// in init with RegisterScheme, like database/sql drivers, saying whether the
// scheme opens as a source, a destination and which modes it takes: the
// routes matrix (weir.Matrix, `weir routes`, docs/routes.md) is derived from
// that, and the matrix test fails for a scheme without a fixture. Adapters
// never import each other. Optional
// capabilities (NativeStream, NativeWriter, StateReader) are separate
// interfaces found with As, so a small adapter stays small.
package routes
