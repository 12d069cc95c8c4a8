package runner

import "testing"

func TestResolveURL(t *testing.T) {
	tests := []struct{ name, raw, want string }{
		{"file", "file://./data", "file:///p/dag/data"},
		{"file parent", "file://../data", "file:///p/data"},
		{"bare", "./data", "/p/dag/data"},
		{"bare plain", "data", "/p/dag/data"},
		{"absolute", "file:///srv/data", "file:///srv/data"},
		{"iceberg", "iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake",
			"iceberg://?catalog=sql&uri=sqlite:///p/dag/lake/catalog.db&warehouse=file:///p/dag/lake"},
		{"param", "iceberg://?catalog=sql&warehouse=./lake&x=1", "iceberg://?catalog=sql&warehouse=/p/dag/lake&x=1"},
		{"postgres", "postgres://u:p@h:5432/db?sslmode=disable", "postgres://u:p@h:5432/db?sslmode=disable"},
		{"space", "file://./my data", "file:///p/dag/my%20data"},
		{"dot", "file://.", "file:///p/dag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ResolveURL(tt.raw, "/p/dag"); got != tt.want {
				t.Errorf("ResolveURL(%q) = %q, want %q", tt.raw, got, tt.want)
			}
		})
	}
}
