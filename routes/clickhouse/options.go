package clickhouse

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/weirhq/weir/routes"
)

// Defaults of the URL options.
const (
	DefaultEngine       = "MergeTree"
	DefaultMaxBodyBytes = 64 << 20
	DefaultLease        = 60 * time.Second
	DefaultHTTPPort     = 8123
	DefaultDatabase     = "default"
)

// Options are the settings a ClickHouse URL's query string carries, until
// routes.WriteOptions grows fields for them.
type Options struct {
	Engine       string        // engine=: engine of new tables; MergeTree (ReplacingMergeTree for merge)
	OrderBy      string        // order_by=: ORDER BY of new tables; default the primary key, else tuple()
	OnCluster    string        // on_cluster=: run DDL ON CLUSTER this cluster
	MaxBodyBytes int64         // max_body_bytes=: cap of one HTTP INSERT body (compressed bytes)
	Lease        time.Duration // lease=: a run whose heartbeat is older than this is dead
	HTTPPort     int           // http_port=: HTTP port used by the native relay for clickhouse:// URLs
	Subseconds   string        // subseconds=error|truncate: sub-second timestamps into DateTime (old servers)
	HTTPFormat   string        // http_format=RowBinary|Native: body format of HTTP inserts
	Secure       bool          // secure=true: TLS on the native port
	Compression  string        // compression=auto|lz4|none: native blocks; auto is none on a loopback host, lz4 elsewhere

	maxDate, maxDateTime int64 // the server's date ranges, set from its version
}

// heartbeat is how often a run refreshes its lease.
func (o Options) heartbeat() time.Duration { return max(o.Lease/6, 100*time.Millisecond) }

// parseOptions reads the query string; unknown keys are bad input, so a
// typo never passes silently.
func parseOptions(q url.Values) (Options, error) {
	o := Options{Engine: "", MaxBodyBytes: DefaultMaxBodyBytes, Lease: DefaultLease,
		HTTPPort: DefaultHTTPPort, Subseconds: "error", HTTPFormat: "RowBinary", Compression: "auto"}
	for k, vs := range q {
		v := vs[len(vs)-1]
		if err := o.set(k, v); err != nil {
			return o, routes.BadInput("clickhouse URL option %s=%q: %v", k, v, err)
		}
	}
	return o, nil
}

func (o *Options) set(k, v string) error {
	var err error
	switch k {
	case "engine":
		o.Engine = v
	case "order_by":
		o.OrderBy = v
	case "on_cluster":
		o.OnCluster = v
	case "max_body_bytes":
		o.MaxBodyBytes, err = strconv.ParseInt(v, 10, 64)
	case "lease":
		o.Lease, err = time.ParseDuration(v)
	case "http_port":
		o.HTTPPort, err = strconv.Atoi(v)
	case "secure":
		o.Secure, err = strconv.ParseBool(v)
	case "subseconds":
		return oneOf(&o.Subseconds, v, "error", "truncate")
	case "http_format":
		return oneOf(&o.HTTPFormat, v, "RowBinary", "Native")
	case "compression":
		return oneOf(&o.Compression, v, "auto", "lz4", "none")
	default:
		return fmt.Errorf("unknown option (known: engine, order_by, on_cluster, max_body_bytes, lease, http_port, secure, subseconds, http_format, compression)")
	}
	return err
}

func oneOf(dst *string, v string, allowed ...string) error {
	for _, a := range allowed {
		if strings.EqualFold(v, a) {
			*dst = a
			return nil
		}
	}
	return fmt.Errorf("want one of %v", allowed)
}

// onCluster renders " ON CLUSTER c" for DDL, or nothing.
func (o Options) onCluster() string {
	if o.OnCluster == "" {
		return ""
	}
	return " ON CLUSTER " + quoteIdent(o.OnCluster)
}
