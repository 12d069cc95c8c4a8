// Package stream holds weir's event sources: Server-Sent Events (sse://,
// sse+https://), WebSocket feeds (ws://, wss://), Kafka (kafka://) and
// Google Cloud Pub/Sub (pubsub://). Each is a Source: an iterator of JSON
// events with a text cursor it can Seek to, and a Commit that acknowledges
// events to the source once the destination committed them (the runner's
// stream tasks, runner/stream.go). Stream sources are not routes.Source
// tables: they are opened with Open, not routes.Open. docs/streams.md
// describes the URL forms, cursors and delivery guarantees.
package stream
