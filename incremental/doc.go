// Package incremental decides what an incremental run reads: the window of
// cursor values past the watermark saved in the destination by the last
// commit (append, merge), and — for models — Kafka-style offsets.
//
// The watermark is never kept locally: it is read from the destination's
// own state (routes.StateReader) and written back by Stage.Commit in the
// same atomic step as the rows, so data and watermark move together.
//
// The files: window.go, the watermark window of a transfer; marks.go, a
// task's committed marks (its State) and where a consumer starts without
// one; consumer.go, the Consumer (Poll, Commit, Seek); bounds.go, where a
// batch of max_batch_rows ends; lag.go, how far a consumer is behind.
package incremental
