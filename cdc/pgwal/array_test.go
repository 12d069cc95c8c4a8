package pgwal

import (
	"errors"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
)

// TestRun_ArrayColumnRefused: a PostgreSQL array column (int[], text[])
// reaches a log_based run's changes as PostgreSQL's array text ('{1,2}'),
// which only a postgres destination takes: into MariaDB, ClickHouse and Iceberg the
// bootstrap loaded it (the bulk route writes JSON, Array) and the first
// change failed with the server's raw error, exit 1. It is refused before
// the bootstrap, exit 2, naming the column; a postgres destination
// replicates it.
func TestRun_ArrayColumnRefused(t *testing.T) {
	tests := []struct {
		kind, column, typ string
		refused           bool
	}{
		{"mysql", "ints", "int[]", true},
		{"mysql", "texts", "text[]", true},
		{"clickhouse", "ints", "int[]", true},
		{"clickhouse", "texts", "text[]", true},
		{"iceberg", "ints", "int[]", true},
		{"postgres", "ints", "int[]", false},
	}
	for _, tt := range tests {
		t.Run(tt.kind+"/"+tt.typ, func(t *testing.T) {
			e := setupTo(t, tt.kind)
			e.exec(`ALTER TABLE ` + ident(e.src) + ` ADD COLUMN ` + tt.column + ` ` + tt.typ)
			e.exec(`UPDATE ` + ident(e.src) + ` SET ` + tt.column + ` = '{1,2}' WHERE id = 1`)
			_, err := Run(e.ctx, e.cfg)
			if err == nil {
				e.exec(`UPDATE ` + ident(e.src) + ` SET ` + tt.column + ` = '{3,4}' WHERE id = 2`)
				_, err = Run(e.ctx, e.cfg)
			}
			if !tt.refused {
				if err != nil {
					t.Fatalf("run into postgres: %v", err)
				}
				return
			}
			if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), tt.column) {
				t.Fatalf("run = %v, want bad input naming the column %s", err, tt.column)
			}
			if tt.kind == "iceberg" {
				return // no SQL there to count tables with
			}
			if n := e.ddb.Query(t, e.ctx, e.ddb.CountSQL("", "")); n != "0" {
				t.Errorf("the refused run left %s tables in the destination, want none", n)
			}
		})
	}
}
