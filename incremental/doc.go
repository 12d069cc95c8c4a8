// Package incremental decides what an incremental run reads: the window of
// cursor values past the watermark saved in the destination by the last
// commit (append, merge), and — for models — Kafka-style offsets.
//
// The watermark is never kept locally: it is read from the destination's
// own state (routes.StateReader) and written back by Stage.Commit in the
// same atomic step as the rows, so data and watermark move together.
package incremental
