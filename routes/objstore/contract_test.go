package objstore_test

import (
	"testing"

	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestContract runs routes' source and destination contract (routestest)
// on file://, s3:// (gofakes3) and gcs:// (fake-gcs-server), Parquet and
// CSV.gz.
func TestContract(t *testing.T) {
	caps := routestest.CapsOf("file")
	stores := map[string]func(testing.TB, ...string) *objstoretest.Fixture{"file": objstoretest.NewFile, "s3": objstoretest.NewS3, "gcs": objstoretest.NewGCS}
	for name, fix := range stores {
		for _, format := range []string{"parquet", "csv.gz"} {
			t.Run(name+"/"+format+"/source", func(t *testing.T) { routestest.RunSourceTests(t, fix(t, "format="+format), caps) })
			t.Run(name+"/"+format+"/destination", func(t *testing.T) { routestest.RunDestinationTests(t, fix(t, "format="+format), caps) })
		}
	}
}
