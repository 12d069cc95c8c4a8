package main

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/weirhq/weir/routes"
)

// weir routes prints the matrix derived from the registered schemes: the
// object-store sources are in it.
func TestRoutesCmd(t *testing.T) {
	code, out := runCmd(t, "routes", "--json")
	var got []routes.Route
	if err := json.Unmarshal([]byte(out), &got); code != ExitOK || err != nil {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	for _, src := range []string{"file", "s3", "gcs", "postgres"} {
		if !slices.Contains(got, routes.Route{Source: src, Destination: "iceberg", Implemented: true}) {
			t.Errorf("weir routes has no implemented %s → iceberg", src)
		}
	}
}
