package objstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/fileformat"
)

// The URL schemes of this route.
const (
	SchemeFile = "file"
	SchemeS3   = "s3"
	SchemeGCS  = "gcs"
)

// Defaults of the URL's query parameters.
const (
	// DefaultLease is short so a killed run frees its table in seconds: the
	// holder renews every lease/3 (2 s), and the manifest's conditional PUT,
	// not the lease, keeps two runs from both publishing over one version.
	DefaultLease     = 6 * time.Second
	DefaultFileBytes = 128 << 20
	DefaultPartBytes = minPartBytes
)

func init() {
	for _, s := range []string{SchemeFile, SchemeS3, SchemeGCS} {
		routes.RegisterScheme(routes.SchemeInfo{Name: s, Source: true, Destination: true, Modes: []routes.Mode{routes.ModeAppend}, WriterChunks: routes.ParquetWriterChunks}, open)
	}
}

// Endpoint is a prefix of an object store (or a local directory) holding
// tables: a Source of data files and weir tables, and a Destination that
// publishes runs through a manifest.
type Endpoint struct {
	url   *routes.URL
	store store
	set   settings
}

var (
	_ routes.Source       = (*Endpoint)(nil)
	_ routes.Destination  = (*Endpoint)(nil)
	_ routes.StateReader  = (*Endpoint)(nil)
	_ routes.CursorSource = (*Endpoint)(nil)
)

// settings are the URL's query parameters.
type settings struct {
	format        string
	endpoint      string
	region        string
	pathStyle     bool
	lease         time.Duration
	fileBytes     int64
	partBytes     int
	rowGroupBytes int64
	compression   fileformat.Compression
}

var knownParams = []string{"format", "endpoint", "region", "path_style", "lease", "file_bytes", "part_bytes", "row_group_bytes", "compression", "compression_level"}

func open(ctx context.Context, u *routes.URL) (routes.Endpoint, error) {
	set, err := parseSettings(u)
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, u, set)
	if err != nil {
		return nil, err
	}
	return &Endpoint{url: u, store: st, set: set}, nil
}

func openStore(ctx context.Context, u *routes.URL, set settings) (store, error) {
	switch u.Scheme() {
	case SchemeS3:
		return newS3Store(ctx, u, set)
	case SchemeGCS:
		return newGCSStore(ctx, u, set)
	}
	root, err := fileRoot(u)
	if err != nil {
		return nil, err
	}
	return newFileStore(root), nil
}

func parseSettings(u *routes.URL) (settings, error) {
	q := u.URL().Query()
	for k := range q {
		if !slices.Contains(knownParams, k) {
			return settings{}, routes.BadInput("%s: unknown parameter %q (known: %s)", u, k, strings.Join(knownParams, ", "))
		}
	}
	var err error
	set := settings{format: fileformat.Parquet, region: "us-east-1", pathStyle: true, lease: DefaultLease,
		fileBytes: DefaultFileBytes, partBytes: DefaultPartBytes, rowGroupBytes: fileformat.DefaultRowGroupBytes}
	if f := q.Get("format"); f != "" {
		set.format = strings.ToLower(f)
	}
	if !fileformat.Valid(set.format) {
		return settings{}, routes.BadInput("%s: format %q (use parquet, csv.gz or csv)", u, set.format)
	}
	if set.compression, err = parseCompression(u, q, set.format); err != nil {
		return settings{}, err
	}
	set.endpoint = q.Get("endpoint")
	if r := q.Get("region"); r != "" {
		set.region = r
	}
	if err := parseNumbers(u, q, &set); err != nil {
		return settings{}, err
	}
	if u.Scheme() == SchemeS3 && set.fileBytes > maxS3FileBytes {
		return settings{}, routes.BadInput("%s: file_bytes=%d: S3 publishes each file with one CopyObject, which takes up to 5 GiB; use at most %d", u, set.fileBytes, int64(maxS3FileBytes))
	}
	return set, nil
}

// parseCompression reads compression= and compression_level=, which only
// Parquet files take (csv.gz is gzip, csv plain).
func parseCompression(u *routes.URL, q url.Values, format string) (fileformat.Compression, error) {
	codec, level := q.Get("compression"), q.Get("compression_level")
	if format != fileformat.Parquet && (codec != "" || level != "") {
		return fileformat.Compression{}, routes.BadInput("%s: compression= and compression_level= apply to format=parquet (format=%s is compressed as its name says)", u, format)
	}
	c, err := fileformat.ParseCompression(codec, level)
	if err != nil {
		return c, routes.BadInput("%s: %v", u, err)
	}
	return c, nil
}

// maxS3FileBytes keeps a file (file_bytes plus the row group that crosses
// it) under CopyObject's 5 GiB limit.
const maxS3FileBytes = 4 << 30

func parseNumbers(u *routes.URL, q url.Values, set *settings) error {
	var err error
	if v := q.Get("path_style"); v != "" {
		if set.pathStyle, err = strconv.ParseBool(v); err != nil {
			return routes.BadInput("%s: path_style=%q is not true or false", u, v)
		}
	}
	if v := q.Get("lease"); v != "" {
		if set.lease, err = time.ParseDuration(v); err != nil || set.lease < time.Second {
			return routes.BadInput("%s: lease=%q: want a duration of at least 1s, like 90s", u, v)
		}
	}
	for _, p := range []struct {
		name string
		dst  *int64
		min  int64
	}{{"file_bytes", &set.fileBytes, 1 << 10}, {"row_group_bytes", &set.rowGroupBytes, 1 << 10}} {
		if err := parseSize(u, q, p.name, p.dst, p.min); err != nil {
			return err
		}
	}
	part := int64(set.partBytes)
	err = parseSize(u, q, "part_bytes", &part, minPartBytes)
	set.partBytes = int(part)
	return err
}

func parseSize(u *routes.URL, q url.Values, name string, dst *int64, least int64) error {
	v := q.Get(name)
	if v == "" {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < least {
		return routes.BadInput("%s: %s=%q: want a byte count of at least %d", u, name, v, least)
	}
	*dst = n
	return nil
}

// Close releases the store's client.
func (e *Endpoint) Close() error { return e.store.Close() }

// tablePath is a table's key prefix: its name as written, so a source
// file keeps its dots ("orders.csv") and "in/orders.parquet" its folder.
func tablePath(t routes.TableRef) (string, error) {
	p, err := cleanKey(strings.Trim(t.String(), "/"))
	if err != nil {
		return "", routes.BadInput("table %s: %v", t, err)
	}
	if p == "" {
		return "", routes.BadInput("empty table name")
	}
	return p, nil
}

func (e *Endpoint) describe(key string) string { return routes.Redact(e.store.Describe(key)) }

func wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// reachProbeKey is an object no run writes: asking for it checks the
// bucket and the credentials with one small request.
const reachProbeKey = "_weir_staging/.reach"

// CheckReach is routes.ReachChecker: a file root is looked at (missing or
// empty is empty); S3 and GCS answer one Get of an object that is not there.
func (e *Endpoint) CheckReach(ctx context.Context) (bool, error) {
	if fs, ok := e.store.(*fileStore); ok {
		return fs.empty()
	}
	if _, _, err := e.store.Get(ctx, reachProbeKey); err != nil && !errors.Is(err, errNotExist) {
		return false, fmt.Errorf("%s: %w", e.store.Describe(""), err)
	}
	return false, nil
}
