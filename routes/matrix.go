package routes

import (
	"slices"
	"sort"
)

// The routes matrix (docs/architecture.md): every source crossed with every
// destination is either implemented (and exercised by the root package's
// routes_matrix_test.go, which moves rows through it) or deferred with a
// reason. The registered schemes (RegisterScheme; a program imports
// github.com/weirhq/weir/routes/all) say which sources and destinations
// exist: any registered source transfers into any registered destination
// through Copy. Planned sources not built yet, and stream sources
// (landed by stream tasks), are listed here. `weir routes` prints the
// matrix; docs/routes.md is rendered from it.
var unbuiltSources []string

// Route is one (source, destination) pair of the matrix.
type Route struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Implemented bool   `json:"implemented"`
	Reason      string `json:"reason,omitempty"` // why a pair is deferred
}

// streamRoutes are the stream pairs a stream task is tested into
// (stream_matrix_test.go runs one for each).
var streamRoutes = map[[2]string]bool{
	{"sse", "postgres"}:    true,
	{"sse", "iceberg"}:     true,
	{"ws", "postgres"}:     true,
	{"ws", "iceberg"}:      true,
	{"kafka", "postgres"}:  true,
	{"kafka", "iceberg"}:   true,
	{"pubsub", "postgres"}: true,
	{"pubsub", "iceberg"}:  true,
	{"sqs", "postgres"}:    true,
	{"sqs", "iceberg"}:     true,
}

// StreamSources are the planned sources that are event streams, landed by
// stream tasks rather than transfers.
var StreamSources = []string{"sse", "ws", "kafka", "sqs", "pubsub"}

// deferReasons: why a source or destination is not there yet. A pair is
// deferred with its source's reason, else its destination's.
var deferReasons = map[string]string{}

// Matrix returns every planned pair, sorted by source then destination.
func Matrix() []Route {
	srcs, dsts := Registered()
	sources := slices.Concat(srcs, unbuiltSources, StreamSources)
	sort.Strings(sources)
	var out []Route
	for _, s := range sources {
		for _, d := range dsts {
			r := Route{Source: s, Destination: d, Implemented: slices.Contains(srcs, s) || streamRoutes[[2]string{s, d}]}
			if !r.Implemented {
				r.Reason = deferReason(s)
			}
			out = append(out, r)
		}
	}
	return out
}

// Registered returns the registered schemes that open as sources and as
// destinations, sorted, without aliases (postgresql, iceberg+rest, …).
func Registered() (sources, destinations []string) {
	for _, name := range Schemes() {
		info, ok := Describe(name)
		if !ok || info.AliasOf != "" {
			continue
		}
		if info.Source {
			sources = append(sources, name)
		}
		if info.Destination {
			destinations = append(destinations, name)
		}
	}
	return sources, destinations
}

func deferReason(src string) string {
	if r, ok := deferReasons[src]; ok {
		return r
	}
	if slices.Contains(StreamSources, src) {
		return "a stream task can write here, but no test runs one into this destination yet (tested: postgres, iceberg)"
	}
	return "pair not wired yet"
}
