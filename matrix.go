package weir

import (
	"slices"
	"sort"
)

// Planned endpoints of the routes matrix (docs/architecture.md): every source crossed
// with every destination is either implemented (and exercised by
// routes_matrix_test.go, which moves rows through it) or deferred with a
// reason. `weir routes` prints this table; docs/routes.md is rendered from it.
var (
	PlannedSources      = []string{"postgres", "mysql", "clickhouse", "iceberg", "gsheets", "github", "github+api", "sse", "ws", "kafka", "sqs", "pubsub"}
	PlannedDestinations = []string{"postgres", "mysql", "clickhouse", "bigquery", "s3", "gcs", "file", "iceberg"}
)

// Route is one (source, destination) pair of the matrix.
type Route struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Implemented bool   `json:"implemented"`
	Reason      string `json:"reason,omitempty"` // why a pair is deferred
}

// implementedRoutes are the pairs that move rows today.
var implementedRoutes = map[[2]string]bool{
	{"postgres", "postgres"}:     true,
	{"postgres", "clickhouse"}:   true,
	{"clickhouse", "clickhouse"}: true,
	{"clickhouse", "postgres"}:   true,
	{"mysql", "mysql"}:           true,
	{"mysql", "postgres"}:        true,
	{"postgres", "mysql"}:        true,
	{"mysql", "clickhouse"}:      true,
	{"clickhouse", "mysql"}:      true,
	{"postgres", "iceberg"}:      true,
	{"mysql", "iceberg"}:         true,
	{"clickhouse", "iceberg"}:    true,
	{"iceberg", "iceberg"}:       true,
	{"iceberg", "postgres"}:      true,
	{"iceberg", "mysql"}:         true,
	{"iceberg", "clickhouse"}:    true,
	{"postgres", "file"}:         true,
	{"postgres", "s3"}:           true,
	{"postgres", "gcs"}:          true,
	{"mysql", "file"}:            true,
	{"mysql", "s3"}:              true,
	{"mysql", "gcs"}:             true,
	{"clickhouse", "file"}:       true,
	{"clickhouse", "s3"}:         true,
	{"clickhouse", "gcs"}:        true,
	{"iceberg", "file"}:          true,
	{"iceberg", "s3"}:            true,
	{"iceberg", "gcs"}:           true,
	{"postgres", "bigquery"}:     true,
	{"mysql", "bigquery"}:        true,
	{"clickhouse", "bigquery"}:   true,
	{"iceberg", "bigquery"}:      true,
	// Stream sources land through stream tasks (runner/stream.go); the
	// matrix test runs a stream task for each pair (stream_matrix_test.go).
	{"sse", "postgres"}:    true,
	{"sse", "iceberg"}:     true,
	{"ws", "postgres"}:     true,
	{"ws", "iceberg"}:      true,
	{"kafka", "postgres"}:  true,
	{"kafka", "iceberg"}:   true,
	{"pubsub", "postgres"}: true,
	{"pubsub", "iceberg"}:  true,
}

// StreamSources are the planned sources that are event streams, landed by
// stream tasks rather than transfers.
var StreamSources = []string{"sse", "ws", "kafka", "sqs", "pubsub"}

// deferReasons: why a source or destination is not there yet. A pair is
// deferred with its source's reason, else its destination's.
var deferReasons = map[string]string{
	"gsheets":    "Google Sheets source not scheduled in any issue yet",
	"github":     "GitHub source not scheduled in any issue yet",
	"github+api": "GitHub API source not scheduled in any issue yet",
	"sqs":        "no SQS peer to test against: goaws v0.4.5 (the emulator on the Go module proxy) speaks only the query protocol, aws-sdk-go-v2's SQS client the JSON protocol (docs/streams.md)",
}

// Matrix returns every planned pair, sorted by source then destination.
func Matrix() []Route {
	var out []Route
	for _, s := range PlannedSources {
		for _, d := range PlannedDestinations {
			r := Route{Source: s, Destination: d, Implemented: implementedRoutes[[2]string{s, d}]}
			if !r.Implemented {
				r.Reason = deferReason(s, d)
			}
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Source < out[j].Source })
	return out
}

func deferReason(src, dst string) string {
	if r, ok := deferReasons[src]; ok && !implementedSource(src) {
		return r
	}
	if slices.Contains(StreamSources, src) && implementedSource(src) {
		return "a stream task can write here, but no test runs one into this destination yet (tested: postgres, iceberg)"
	}
	if r, ok := deferReasons[dst]; ok {
		return r
	}
	return "pair not wired yet"
}

func implementedSource(s string) bool {
	for p := range implementedRoutes {
		if p[0] == s {
			return true
		}
	}
	return false
}
