package runner

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/weirhq/weir/duck"
)

// jsonRows renders the rows of q as canonical JSON (keys sorted, numbers
// as floats), sorted; with keys, only those keys.
func jsonRows(t *testing.T, db *duck.DB, q string, keys map[string]any) []string {
	res, err := db.Query(testContext(t), "SELECT CAST(to_json(x) AS VARCHAR) FROM ("+q+") AS x")
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer res.Release()
	var out []string
	for res.Next() {
		col := res.RecordBatch().Column(0)
		for i := 0; i < col.Len(); i++ {
			out = append(out, canonical(t, col.ValueStr(i), keys))
		}
	}
	sort.Strings(out)
	return out
}

func canonical(t *testing.T, s string, keys map[string]any) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	if keys != nil {
		for k := range m {
			if _, ok := keys[k]; !ok {
				delete(m, k)
			}
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}
