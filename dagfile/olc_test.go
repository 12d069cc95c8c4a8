package dagfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOLC_RefusedKeys: every OLC key weir does not implement is refused,
// OLC-001, at its line, naming the key — in every section; a key OLC does
// not define is refused as unknown. None is ignored.
func TestOLC_RefusedKeys(t *testing.T) {
	base := "version: 1.0.0\ninfo: {title: T}\nmodel:\n  fields:\n    - {name: id, type: integer%s}\nprimary_key: [id]\n%s"
	type tc struct{ field, top, path string }
	var cases []tc
	for k := range olcUnsupported {
		cases = append(cases, tc{"", k + ": {}\n", k})
	}
	for k := range olcFieldRefused {
		cases = append(cases, tc{", " + k + ": x", "", "model.fields[0]." + k})
	}
	for k := range transformRefused {
		cases = append(cases, tc{"", "transformations:\n  - " + k + ": {}\n", "transformations[0]." + k})
	}
	for _, k := range []string{"target", "table", "location", "format", "notifications", "notifications_enabled", "strict_notifications"} {
		cases = append(cases, tc{"", "quarantine:\n  " + k + ": x\n", "quarantine." + k})
	}
	for _, k := range []string{"partition_by", "cluster_by", "reprocess_policy", "reprocess_date_column", "target_path", "location", "format",
		"fact", "soft_delete_column", "soft_delete_value", "soft_delete_time_column", "soft_delete_reason_column", "table_properties", "compaction", "unknown_member"} {
		cases = append(cases, tc{"", "materialization:\n  strategy: merge\n  " + k + ": x\n", "materialization." + k})
	}
	cases = append(cases,
		tc{"", "quarantine: {enabled: false}\n", "quarantine.enabled"},
		tc{"", "quarantine: {write_mode: overwrite}\n", "quarantine.write_mode"},
		tc{"", "materialization: {merge_dedup_guard: false}\n", "materialization.merge_dedup_guard"},
		tc{"", "quality:\n  row_rules:\n    - {name: r, sql: 'id > 0', severity: info}\n", "quality.row_rules[0].severity"},
		tc{"", "quality:\n  row_rules:\n    - {referential_integrity: {field: id, reference: d, key: id}}\n", "quality.row_rules[0].referential_integrity"},
		tc{"", "transformations:\n  - {phase: post, sql: 'SELECT * FROM source'}\n", "transformations[0].sql"},
		tc{"", "model_x: 1\n", ""},
	)
	dir := t.TempDir()
	for i, c := range cases {
		path := filepath.Join(dir, "c.olc.yaml")
		os.WriteFile(path, []byte(strings.Replace(strings.Replace(base, "%s", c.field, 1), "%s", c.top, 1)), 0o644)
		_, err := LoadContract(path)
		var el ErrorList
		if !errors.As(err, &el) || len(el) == 0 {
			t.Errorf("case %d (%s): want a refusal, got %v", i, c.path, err)
			continue
		}
		if c.path == "" {
			if el[0].Rule != RuleFormat || !strings.Contains(el[0].Msg, `unknown key "model_x"`) {
				t.Errorf("unknown top key: %v", err)
			}
			continue
		}
		found := false
		for _, e := range el {
			if e.Rule == RuleOLCUnsupported && e.Key == c.path && e.Line > 0 && strings.Contains(e.Msg, "not supported by weir") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want OLC-001 at the key, got %v", c.path, err)
		}
	}
	if len(cases) < 50 {
		t.Fatalf("only %d cases", len(cases))
	}
}
