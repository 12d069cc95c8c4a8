package faults_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/weirhq/weir/routes/clickhouse/clickhousetest"
	"github.com/weirhq/weir/routes/iceberg/icebergtest"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/routestest"
)

// lease is how long a killed run's lease blocks its table on the
// destinations whose lock is a lease (ClickHouse, Iceberg, object stores;
// the default is a minute). PostgreSQL and MySQL locks die with the session.
const lease = "lease=3s"

// destination is one implemented destination of the suite: a fixture, the
// URL weir writes to, and the modes it supports.
type destination struct {
	name  string
	open  func(t *testing.T) (routestest.Fixture, string)
	modes []string
}

var destinations = []destination{
	{"postgres", func(t *testing.T) (routestest.Fixture, string) {
		f := newPG(t)
		return f, f.URL()
	}, []string{"replace", "append", "merge", "log_based"}},
	{"mysql", func(t *testing.T) (routestest.Fixture, string) {
		f := mysqltest.New(t)
		return f, f.URL()
	}, []string{"replace", "append", "merge", "log_based"}},
	{"clickhouse", func(t *testing.T) (routestest.Fixture, string) {
		f := clickhousetest.New(t)
		return f, f.URLWith(lease)
	}, []string{"replace", "append"}},
	{"file", func(t *testing.T) (routestest.Fixture, string) {
		f := objstoretest.NewFile(t, lease)
		return f, f.URL()
	}, []string{"replace", "append"}},
	{"s3", func(t *testing.T) (routestest.Fixture, string) {
		f := objstoretest.NewS3(t, lease)
		return f, f.URL()
	}, []string{"replace", "append"}},
	{"gcs", func(t *testing.T) (routestest.Fixture, string) {
		f := objstoretest.NewGCS(t, lease)
		return f, f.URL()
	}, []string{"replace", "append"}},
	{"iceberg", func(t *testing.T) (routestest.Fixture, string) {
		f := icebergtest.New(t)
		return f, f.URL() + "&" + lease
	}, []string{"replace", "append", "merge"}},
}

// tableHash is the ordered hash of a table as its readers see it (rows by
// id, rendered the same on every engine) and its row count; "" when the
// table does not exist.
func tableHash(t *testing.T, ctx context.Context, f routestest.Fixture, name string) (string, int) {
	t.Helper()
	rows, ok := f.Read(t, ctx, name)
	if !ok {
		return "", 0
	}
	return rowsHash(rows), len(rows)
}

func rowsHash(rows []routestest.Row) string {
	h := sha256.New()
	for _, r := range rows {
		h.Write([]byte(r.String()))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// visibleStaging lists what a killed run left that the next run did not
// clean: staging tables, run files outside the manifest, a lease. On
// Iceberg the data files a killed run wrote stay as orphans that no
// snapshot references — no reader sees them (docs/failure-modes.md) — so
// only its lease counts.
func visibleStaging(t *testing.T, ctx context.Context, f routestest.Fixture, name string) []string {
	t.Helper()
	left := f.Staging(t, ctx, name)
	ice, ok := f.(*icebergtest.Fixture)
	if !ok {
		return left
	}
	orphans, err := ice.Endpoint().Orphans(ctx, ice.TableRef(name))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range left {
		if !slices.Contains(orphans, l) {
			out = append(out, l)
		}
	}
	return out
}
