package bigquery

import (
	"testing"

	"github.com/weirhq/weir/routes"
)

// TestIsStageOf: a leftover staging table is dropped only when its name
// and its description both make it a staging table of the destination;
// user tables that merely look like weir's (a backup, a staging table of
// another table whose name extends this one's, a copied name with another
// description) are never taken for one.
func TestIsStageOf(t *testing.T) {
	ab := routes.TableRef{Schema: "ds", Name: "a_b"}
	a := routes.TableRef{Schema: "ds", Name: "a"}
	tests := []struct {
		name, desc string
		dest       routes.TableRef
		run        string // "" = not a staging table of dest
	}{
		{"_weir_stage_a_b_12345678", stageDescription(ab, "12345678"), ab, "12345678"},
		{"_weir_stage_a_b_custom_run", stageDescription(ab, "custom_run"), ab, "custom_run"},
		{"_weir_stage_a_b_backup", "", ab, ""},
		{"_weir_stage_a_b_backup", "my backup of the staging table", ab, ""},
		{"_weir_stage_a_b_12345678", "", ab, ""},
		{"_weir_stage_a_b_12345678", stageDescription(routes.TableRef{Schema: "other", Name: "a_b"}, "12345678"), ab, ""},
		{"_weir_stage_a_b_12345678", stageDescription(ab, "87654321"), ab, ""},
		{"_weir_stage_a_b_12345678", stageDescription(ab, "12345678"), a, ""}, // a_b's, seen from a
		{"_weir_stage_a_b_", stageDescription(ab, ""), ab, ""},
		{"_weir_stage_aXb_12345678", stageDescription(routes.TableRef{Schema: "ds", Name: "aXb"}, "12345678"), ab, ""},
		{"_weir_stage_a_b", "", ab, ""},
		{"_weir_old_a_b_12345678", stageDescription(ab, "12345678"), ab, ""},
		{"a_b", stageDescription(ab, "12345678"), ab, ""},
	}
	for _, tc := range tests {
		run, ok := isStageOf(tc.name, tc.desc, tc.dest)
		if ok != (tc.run != "") || run != tc.run {
			t.Errorf("isStageOf(%q, %q, %s) = %q, %v; want %q", tc.name, tc.desc, tc.dest, run, ok, tc.run)
		}
	}
}
