package bigquery

import (
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
)

func TestQuote(t *testing.T) {
	tests := []struct{ in, ident, str string }{
		{"plain", "`plain`", "'plain'"},
		{"p.d.t", "`p.d.t`", "'p.d.t'"},
		{"a`b", "`a\\`b`", "'a`b'"},
		{`back\slash`, "`back\\\\slash`", `'back\\slash'`},
		{"it's\nnew", "`it's\nnew`", `'it\'s\nnew'`},
	}
	for _, tt := range tests {
		if got := quoteIdent(tt.in); got != tt.ident {
			t.Errorf("quoteIdent(%q) = %s, want %s", tt.in, got, tt.ident)
		}
		if got := quoteString(tt.in); got != tt.str {
			t.Errorf("quoteString(%q) = %s, want %s", tt.in, got, tt.str)
		}
	}
}

func TestMergeSQL(t *testing.T) {
	tests := []struct {
		name      string
		cols, key []string
		want      string
	}{
		{"one_key", []string{"id", "name"}, []string{"id"},
			"MERGE `p.d.t` T USING `p.d.s` S ON T.`id` = S.`id` WHEN MATCHED THEN UPDATE SET `name` = S.`name` WHEN NOT MATCHED THEN INSERT (`id`, `name`) VALUES (S.`id`, S.`name`)"},
		{"two_keys", []string{"a", "b", "v"}, []string{"a", "b"},
			"MERGE `p.d.t` T USING `p.d.s` S ON T.`a` = S.`a` AND T.`b` = S.`b` WHEN MATCHED THEN UPDATE SET `v` = S.`v` WHEN NOT MATCHED THEN INSERT (`a`, `b`, `v`) VALUES (S.`a`, S.`b`, S.`v`)"},
		{"only_keys", []string{"id"}, []string{"id"},
			"MERGE `p.d.t` T USING `p.d.s` S ON T.`id` = S.`id` WHEN NOT MATCHED THEN INSERT (`id`) VALUES (S.`id`)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mergeSQL("`p.d.t`", "`p.d.s`", tt.cols, tt.key); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestTransactionSQL(t *testing.T) {
	e := &Endpoint{cfg: config{Project: "p"}}
	dest := routes.TableRef{Schema: "d", Name: "t"}
	row := newStateRow(dest, routes.State{SourceID: "postgres://h/db#public.t", Cursor: "id", Watermark: "42", RunID: "r1", Rows: 7}, "weir_append_d_t_r1")
	row.Version = 5
	got := transactionSQL(insertSQL("`p.d.t`", "`p.d.s`", []string{"id", "v"}), e.insertStateSQL("d", row))
	want := "BEGIN TRANSACTION;\n" +
		"INSERT INTO `p.d.t` (`id`, `v`) SELECT `id`, `v` FROM `p.d.s`;\n" +
		"INSERT INTO `p.d._weir_state` (`dest_table`, `source`, `cursor_column`, `watermark`, `position`, `run_id`, `rows`, `job_id`, `version`)\n" +
		"SELECT 't', 'postgres://h/db#public.t', 'id', '42', '', 'r1', 7, 'weir_append_d_t_r1', GREATEST(5, COALESCE(MAX(version), 0) + 1) FROM `p.d._weir_state` WHERE dest_table = 't' AND source = 'postgres://h/db#public.t';\n" +
		"COMMIT TRANSACTION;"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestJobID(t *testing.T) {
	tests := []struct {
		dest routes.TableRef
		want string
	}{
		{routes.TableRef{Schema: "ds", Name: "events"}, "weir_swap_ds_events_ab12cd34"},
		{routes.TableRef{Schema: "ds", Name: "my table.ü"}, "weir_swap_ds_my_table___ab12cd34"},
	}
	for _, tt := range tests {
		if got := jobID("swap", tt.dest, "ab12cd34"); got != tt.want {
			t.Errorf("jobID(%s) = %s, want %s", tt.dest, got, tt.want)
		}
	}
	long := jobID("swap", routes.TableRef{Schema: "ds", Name: strings.Repeat("x", 2000)}, "ab12cd34")
	if len(long) > 1024 || !strings.HasSuffix(long, "_ab12cd34") {
		t.Errorf("long job id: %d bytes, ends %q", len(long), long[len(long)-12:])
	}
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		raw     string
		want    config
		wantErr string
	}{
		{"bigquery://proj/ds?location=EU", config{Project: "proj", Dataset: "ds", Location: "EU", Swap: SwapCopy, Format: FormatParquet, Lease: DefaultLease, ChunkBytes: DefaultChunkBytes}, ""},
		{"bigquery://proj?endpoint=http://127.0.0.1:9050/&swap=dml&format=json&lease=30s&upload_chunk_bytes=0",
			config{Project: "proj", Endpoint: "http://127.0.0.1:9050", Swap: SwapDML, Format: FormatJSON, Lease: 30e9}, ""},
		{"bigquery:///ds", config{}, "names no project"},
		{"bigquery://p/a/b", config{}, "one dataset"},
		{"bigquery://p/d?swap=rename", config{}, "want copy or dml"},
		{"bigquery://p/d?lease=10ms", config{}, "under a second"},
		{"bigquery://p/d?format=avro", config{}, "want parquet or json"},
		{"bigquery://p/d?locaton=EU", config{}, "unknown option"},
		{"bigquery://p/d?endpoint=localhost", config{}, "http(s)://host:port"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			u, err := routes.ParseURL(tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseConfig(u)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
