package iceberg

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/fileformat"
)

// config is what an iceberg:// or iceberg+rest:// URL says.
type config struct {
	catalog   string        // "sql" or "rest"
	uri       string        // the catalog database (sql) or endpoint (rest), with secrets
	dialect   string        // sql: "sqlite" or "postgres"
	warehouse string        // default table location root
	snapshot  int64         // time travel: read this snapshot id (0 = current)
	lease     time.Duration // sql catalogs: how long a dead run's lease blocks the table
	props     map[string]string
	identity  string // the endpoint without secrets, for state keys
	// compression is the codec of the data files weir writes, from
	// compression= and compression_level= (nil: the table's own property).
	compression iceberg.Properties
}

// passthrough query keys go to the catalog and its FileIO as they are:
// s3.endpoint, s3.region, rest credentials and the like.
var passthroughPrefixes = []string{"s3.", "client.", "rest.", "io-impl", "credential", "token", "prefix", "scope", "oauth2-server-uri"}

// knownParams are the query parameters weir reads itself.
var knownParams = []string{"catalog", "uri", "warehouse", "snapshot", "lease", "endpoint", "region", "path_style", "tls", "compression", "compression_level"}

// parseConfig reads an Iceberg URL:
//
//	iceberg://?catalog=sql&uri=sqlite:///path/catalog.db&warehouse=file:///path
//	iceberg://?catalog=sql&uri=postgres://user@host:5432/db&warehouse=file:///path
//	iceberg+rest://host:8181/?warehouse=...&tls=true
//
// A query parameter snapshot=<id> pins reads to that snapshot.
func parseConfig(u *routes.URL) (*config, error) {
	q := u.URL().Query()
	c := &config{catalog: q.Get("catalog"), warehouse: q.Get("warehouse"), props: map[string]string{}, lease: DefaultLeaseTTL}
	for k, vs := range q {
		switch {
		case hasAnyPrefix(k, passthroughPrefixes):
			c.props[k] = vs[0]
		case !slices.Contains(knownParams, k):
			return nil, routes.BadInput("iceberg URL %s: unknown parameter %q (known: %s, and catalog properties starting %s)",
				u, k, strings.Join(knownParams, ", "), strings.Join(passthroughPrefixes, ", "))
		}
	}
	if s := q.Get("snapshot"); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, routes.BadInput("iceberg URL %s: snapshot=%q is not a snapshot id", u, s)
		}
		c.snapshot = id
	}
	if v := q.Get("lease"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second {
			return nil, routes.BadInput("iceberg URL %s: lease=%q: want a duration of at least 1s, like 90s", u, v)
		}
		c.lease = d
	}
	if err := c.parseCompression(u, q); err != nil {
		return nil, err
	}
	if err := c.objectStore(u, q); err != nil {
		return nil, err
	}
	if u.Scheme() == RESTScheme {
		return c.rest(u)
	}
	return c.sql(u, q.Get("uri"))
}

// objectStore reads the settings of an s3:// warehouse into the FileIO
// properties iceberg-go's S3 IO takes: endpoint=, region= and path_style=
// as in weir's s3:// URLs (explicit s3.* parameters win), and the access
// key id and secret from the warehouse's user:password, which is then
// dropped from the warehouse (table locations must not carry secrets).
// Without them the AWS SDK's default chain applies (AWS_ACCESS_KEY_ID…).
func (c *config) objectStore(u *routes.URL, q url.Values) error {
	setDefault := func(k, v string) {
		if _, ok := c.props[k]; !ok && v != "" {
			c.props[k] = v
		}
	}
	setDefault(icebergio.S3EndpointURL, q.Get("endpoint"))
	setDefault(icebergio.S3Region, q.Get("region"))
	if v := q.Get("path_style"); v != "" {
		ps, err := strconv.ParseBool(v)
		if err != nil {
			return routes.BadInput("iceberg URL %s: path_style=%q is not true or false", u, v)
		}
		setDefault(icebergio.S3ForceVirtualAddressing, strconv.FormatBool(!ps))
	}
	if !isS3(c.warehouse) {
		return nil
	}
	w, err := url.Parse(c.warehouse)
	if err != nil || w.Host == "" {
		return routes.BadInput("iceberg URL %s: warehouse %s is not s3://bucket/prefix", u, routes.Redact(c.warehouse))
	}
	if pw, ok := w.User.Password(); ok {
		setDefault(icebergio.S3AccessKeyID, w.User.Username())
		setDefault(icebergio.S3SecretAccessKey, pw)
		w.User = nil
		c.warehouse = w.String()
	}
	if os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
		setDefault(icebergio.S3Region, DefaultS3Region)
	}
	return nil
}

// parseCompression reads compression= and compression_level= into the
// table properties iceberg-go's Parquet writer takes (its codec names
// differ from the parameter's).
func (c *config) parseCompression(u *routes.URL, q url.Values) error {
	codec, level := q.Get("compression"), q.Get("compression_level")
	if codec == "" && level == "" {
		return nil
	}
	comp, err := fileformat.ParseCompression(codec, level)
	if err != nil {
		return routes.BadInput("iceberg URL %s: %v", u, err)
	}
	c.compression = compressionProps(comp)
	return nil
}

// compressionProps are the Iceberg table properties of a Parquet codec.
func compressionProps(c fileformat.Compression) iceberg.Properties {
	name := map[string]string{fileformat.CodecZstd: "zstd", fileformat.CodecSnappy: "snappy",
		fileformat.CodecLZ4: "lz4raw", fileformat.CodecNone: "uncompressed"}[c.Codec]
	level := table.ParquetCompressionLevelDefault
	if c.Level != 0 {
		level = c.Level
	}
	return iceberg.Properties{table.ParquetCompressionKey: name, table.ParquetCompressionLevelKey: strconv.Itoa(level)}
}

// DefaultS3Region is the region of an s3:// warehouse that names none
// (region=, s3.region=, AWS_REGION), as for weir's s3:// URLs.
const DefaultS3Region = "us-east-1"

func isS3(location string) bool {
	return hasAnyPrefix(location, []string{"s3://", "s3a://", "s3n://"})
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func (c *config) rest(u *routes.URL) (*config, error) {
	raw := u.URL()
	scheme := "http"
	if raw.Query().Get("tls") == "true" {
		scheme = "https"
	}
	if raw.Host == "" {
		return nil, routes.BadInput("iceberg URL %s: a REST catalog needs a host (iceberg+rest://host:8181/)", u)
	}
	c.catalog = "rest"
	endpoint := url.URL{Scheme: scheme, Host: raw.Host, Path: raw.Path, User: raw.User}
	c.uri = endpoint.String()
	endpoint.User = nil
	c.identity = "iceberg+rest://" + endpoint.Host + endpoint.Path + "?warehouse=" + c.warehouse
	return c, nil
}

func (c *config) sql(u *routes.URL, uri string) (*config, error) {
	if c.catalog == "" {
		c.catalog = "sql"
	}
	if c.catalog != "sql" {
		return nil, routes.BadInput("iceberg URL %s: catalog=%s is not supported (use catalog=sql, or iceberg+rest:// for a REST catalog)", u, c.catalog)
	}
	switch {
	case strings.HasPrefix(uri, "sqlite:"):
		c.dialect, c.uri = "sqlite", absPath(afterScheme(uri))
		if c.warehouse == "" {
			c.warehouse = "file://" + filepath.Dir(c.uri)
		}
	case strings.HasPrefix(uri, "postgres://"), strings.HasPrefix(uri, "postgresql://"):
		c.dialect, c.uri = "postgres", uri
	default:
		return nil, routes.BadInput("iceberg URL %s: uri=%q must be sqlite:///path/catalog.db or postgres://… (percent-encode & inside it)", u, routes.Redact(uri))
	}
	if c.warehouse == "" {
		return nil, routes.BadInput("iceberg URL %s: warehouse= is required with a %s catalog (file:///path or s3://bucket/prefix)", u, c.dialect)
	}
	c.warehouse = normalizeWarehouse(c.warehouse)
	if !strings.HasPrefix(c.warehouse, "file://") && !isS3(c.warehouse) {
		return nil, routes.BadInput("iceberg URL %s: warehouse %s: only file:// and s3:// warehouses are linked into weir", u, routes.Redact(c.warehouse))
	}
	c.identity = "iceberg://?catalog=sql&uri=" + redactedURI(c) + "&warehouse=" + c.warehouse
	return c, nil
}

// afterScheme strips "scheme:" and "//": sqlite:///abs/db, sqlite://./rel/db.
func afterScheme(s string) string {
	s = s[strings.IndexByte(s, ':')+1:]
	return strings.TrimPrefix(s, "//")
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// normalizeWarehouse makes file:// and bare warehouse paths absolute.
func normalizeWarehouse(w string) string {
	switch {
	case strings.HasPrefix(w, "file:"):
		return "file://" + absPath(afterScheme(w))
	case !strings.Contains(w, "://"):
		return "file://" + absPath(w)
	}
	return strings.TrimSuffix(w, "/")
}

// redactedURI is the catalog database without user or password.
func redactedURI(c *config) string {
	if c.dialect == "sqlite" {
		return "sqlite://" + c.uri
	}
	pu, err := url.Parse(c.uri)
	if err != nil {
		return "postgres://?"
	}
	return (&url.URL{Scheme: pu.Scheme, Host: pu.Host, Path: pu.Path}).String()
}
