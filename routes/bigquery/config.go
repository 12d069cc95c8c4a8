package bigquery

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/redact"
)

// Defaults of the URL options.
const (
	DefaultLease      = 5 * time.Minute
	DefaultChunkBytes = 16 << 20 // googleapi's default upload chunk
)

// The ways Commit swaps a replaced table in.
const (
	SwapCopy = "copy" // a copy job WRITE_TRUNCATE staging → table: free, no DML
	SwapDML  = "dml"  // DELETE + INSERT … SELECT in one transaction: keeps the table, needs DML (billing)
)

// The load file formats.
const (
	FormatParquet = "parquet" // objstore's Parquet encoder: typed, compressed
	FormatJSON    = "json"    // newline-delimited JSON
)

// config is what a bigquery:// URL says:
//
//	bigquery://PROJECT/DATASET?location=EU&credentials_file=/path/key.json
//	bigquery://test-project/weir_test?endpoint=http://127.0.0.1:9050&swap=dml
type config struct {
	Project         string
	Dataset         string        // default dataset of unqualified tables
	Location        string        // location=: of new datasets and of every job
	CredentialsFile string        // credentials_file=: a service account or ADC JSON; default Application Default Credentials
	Endpoint        string        // endpoint=: another API root (an emulator); http:// endpoints go without authentication
	Swap            string        // swap=copy|dml: how replace swaps the table in
	Format          string        // format=parquet|json: the load files
	Lease           time.Duration // lease=: a lock whose heartbeat is older is dead
	ChunkBytes      int           // upload_chunk_bytes=: media upload chunk; each pipe buffers one
}

var knownOptions = "location, credentials_file, endpoint, swap, format, lease, upload_chunk_bytes"

// parseConfig reads a bigquery:// URL; unknown options are bad input, so a
// typo never passes silently.
func parseConfig(u *routes.URL) (config, error) {
	raw := u.URL()
	c := config{Project: raw.Host, Dataset: strings.Trim(raw.Path, "/"), Swap: SwapCopy, Format: FormatParquet, Lease: DefaultLease, ChunkBytes: DefaultChunkBytes}
	if c.Project == "" {
		return c, routes.BadInput("bigquery URL %s names no project: use bigquery://PROJECT/DATASET", u)
	}
	if strings.Contains(c.Dataset, "/") {
		return c, routes.BadInput("bigquery URL %s: the path is one dataset, got %q", u, c.Dataset)
	}
	for k, vs := range raw.Query() {
		v := vs[len(vs)-1]
		if err := c.set(k, v); err != nil {
			return c, routes.BadInput("bigquery URL option %s=%q: %v", k, redact.Param(k, routes.Redact(v)), err)
		}
	}
	return c, nil
}

func (c *config) set(k, v string) error {
	var err error
	switch k {
	case "location":
		c.Location = v
	case "credentials_file":
		c.CredentialsFile = v
	case "endpoint":
		if pu, perr := url.Parse(v); perr != nil || pu.Scheme == "" || pu.Host == "" {
			return fmt.Errorf("want an http(s)://host:port URL")
		}
		c.Endpoint = strings.TrimRight(v, "/")
	case "swap":
		if v != SwapCopy && v != SwapDML {
			return fmt.Errorf("want %s or %s", SwapCopy, SwapDML)
		}
		c.Swap = v
	case "format":
		if v != FormatParquet && v != FormatJSON {
			return fmt.Errorf("want %s or %s", FormatParquet, FormatJSON)
		}
		c.Format = v
	case "lease":
		c.Lease, err = time.ParseDuration(v)
		if err == nil && c.Lease < time.Second {
			err = fmt.Errorf("a lease under a second would expire between two calls")
		}
	case "upload_chunk_bytes":
		c.ChunkBytes, err = strconv.Atoi(v)
		if err == nil && c.ChunkBytes < 0 {
			err = fmt.Errorf("want 0 (one streamed request) or a positive size")
		}
	default:
		return fmt.Errorf("unknown option (known: %s)", knownOptions)
	}
	return err
}

// heartbeat is how often a run refreshes its lease.
func (c config) heartbeat() time.Duration { return max(c.Lease/6, 200*time.Millisecond) }
