package routes

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Endpoint is what a Factory opens: a Source, a Destination, or both.
type Endpoint interface {
	io.Closer
}

// Factory opens an endpoint for a URL of its scheme.
type Factory func(ctx context.Context, u *URL) (Endpoint, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Factory{}
	infos      = map[string]SchemeInfo{}
)

// SchemeInfo describes a registered scheme: the roles its endpoints take
// and the destination modes they accept. The routes matrix (routes.Matrix,
// `weir routes`, docs/routes.md) is derived from it.
type SchemeInfo struct {
	Name        string
	Source      bool   // opens as a Source
	Destination bool   // opens as a Destination (replace, and Modes)
	Modes       []Mode // destination modes besides replace
	Capture     bool   // a log_based (CDC) source: its endpoint is a CaptureChecker
	AliasOf     string // the scheme this one spells differently (postgresql → postgres): no matrix row of its own
	// OfflineSchema, when set, reads a table's schema from local files
	// without opening the endpoint (weir lint; routes.OfflineSchema).
	OfflineSchema OfflineSchemaFunc
	// WriterChunks is the memory, in chunks, one pipe's writer of this
	// destination churns through beside the pipe's ChunksPerPipe: Parquet
	// writers gather a row group and allocate its pages afresh, and Go's
	// collector needs that room under the transfer's memory limit or it
	// runs back to back (cmd/weir/memlimit.go).
	WriterChunks int
}

// ParquetWriterChunks is WriterChunks of the destinations that write
// Parquet (objstore, iceberg). Measured on PG → Parquet with 2 pipes
// (bench/README.md, "PG → Parquet"): with the limit at the pipes' chunks
// alone the collector and the scavenger took half of weir's CPU; 3 chunks
// more per pipe halved it, private memory 80 MiB.
const ParquetWriterChunks = 3

// RegisterScheme registers a described scheme (Register, plus Describe).
func RegisterScheme(info SchemeInfo, f Factory) {
	Register(info.Name, f)
	registryMu.Lock()
	defer registryMu.Unlock()
	infos[info.Name] = info
}

// Describe returns what RegisterScheme said of a scheme; false for one
// registered with Register alone (a test's or a program's own).
func Describe(scheme string) (SchemeInfo, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	info, ok := infos[scheme]
	return info, ok
}

// Register makes a scheme available. It panics on a nil factory or a
// duplicate scheme, like database/sql.Register.
func Register(scheme string, f Factory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if f == nil {
		panic("routes: Register factory is nil for " + scheme)
	}
	if _, dup := registry[scheme]; dup {
		panic("routes: Register called twice for " + scheme)
	}
	registry[scheme] = f
}

// Schemes lists the registered schemes, sorted.
func Schemes() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]string, 0, len(registry))
	for s := range registry {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Open parses raw and opens the endpoint its scheme names.
func Open(ctx context.Context, raw string) (Endpoint, error) {
	u, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	registryMu.RLock()
	f, ok := registry[u.Scheme()]
	registryMu.RUnlock()
	if !ok {
		return nil, unknownScheme(u)
	}
	ep, err := f(ctx, u)
	if err != nil {
		// The adapters' errors name no URL: it is said here, once, and the
		// drivers' multi-line texts (pgx lists each dial attempt) become
		// one line a scheduler's log keeps together.
		return nil, &scrubbedError{msg: fmt.Sprintf("open %s: %s", u, oneLine(Scrub(err.Error(), u.Password()))), err: err}
	}
	return ep, nil
}

// unknownScheme tells a CLI user which URLs work; a Go program that
// registered none is told what to import.
func unknownScheme(u *URL) error {
	known := Schemes()
	switch {
	case len(known) == 0:
		return BadInput("unknown scheme %q in %s: no URL scheme is registered (a Go program imports github.com/weirhq/weir/routes/all)", u.Scheme(), u)
	case slices.Contains(StreamSchemes(), u.Scheme()):
		return BadInput("%s is an event stream, not a table: land it with a stream task in a dagfile (docs/streams.md); tables are read from %s", u, schemeList(known))
	}
	return BadInput("unknown scheme %q in %s: use one of %s (weir routes lists what goes where)", u.Scheme(), u, schemeList(known))
}

func schemeList(schemes []string) string {
	out := make([]string, len(schemes))
	for i, s := range schemes {
		out[i] = s + "://"
	}
	return strings.Join(out, ", ")
}

var (
	streamMu      sync.RWMutex
	streamSchemes []string
)

// RegisterStreamSchemes records the schemes of event-stream sources (package
// routes/stream), which stream tasks read rather than Open, so that the CLI
// lists them and Open can point a transfer of one to stream tasks.
func RegisterStreamSchemes(schemes ...string) {
	streamMu.Lock()
	defer streamMu.Unlock()
	streamSchemes = append(streamSchemes, schemes...)
	sort.Strings(streamSchemes)
}

// StreamSchemes lists the registered stream schemes, sorted.
func StreamSchemes() []string {
	streamMu.RLock()
	defer streamMu.RUnlock()
	return slices.Clone(streamSchemes)
}

// oneLine joins a multi-line error text and drops repeated lines (pgx
// reports the same refusal once per TLS and plain attempt).
func oneLine(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	var b strings.Builder
	seen := map[string]bool{}
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || seen[l] {
			continue
		}
		seen[l] = true
		switch {
		case b.Len() == 0:
		case strings.HasSuffix(b.String(), ":"):
			b.WriteString(" ")
		default:
			b.WriteString("; ")
		}
		b.WriteString(l)
	}
	return b.String()
}

// OpenSource opens raw as a Source.
func OpenSource(ctx context.Context, raw string) (Source, error) {
	return openAs[Source](ctx, raw, "a source")
}

// OpenDestination opens raw as a Destination.
func OpenDestination(ctx context.Context, raw string) (Destination, error) {
	return openAs[Destination](ctx, raw, "a destination")
}

func openAs[T any](ctx context.Context, raw, role string) (T, error) {
	var zero T
	ep, err := Open(ctx, raw)
	if err != nil {
		return zero, err
	}
	t, ok := ep.(T)
	if !ok {
		ep.Close()
		u, _ := ParseURL(raw)
		return zero, fmt.Errorf("%w: %s cannot be %s", ErrUnsupported, u, role)
	}
	return t, nil
}

// As finds an optional capability on v, like errors.As for interfaces:
// routes.As[routes.StateReader](dst).
func As[T any](v any) (T, bool) {
	t, ok := v.(T)
	return t, ok
}

// scrubbedError carries a driver error whose text may echo a secret: its
// message is scrubbed, its chain kept for errors.Is.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }
