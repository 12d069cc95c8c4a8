package weir_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	bq "cloud.google.com/go/bigquery"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/bigquery/bigquerytest"
	"github.com/weirhq/weir/routes/routestest"
)

// plants are user objects whose names look like weir's artifacts for a
// table "a_b": every mode must leave each of them as it was.
type plants struct {
	db    *cdctest.DB
	names []string
}

// plant creates, beside table, a user table (one row) per artifact-like
// name and a user view, plus a table "aXb" (a name that differs from
// "a_b" only where LIKE's _ matches anything) with the live staging table
// of a concurrent run on it, marked as weir marks its own.
func plant(t *testing.T, ctx context.Context, d *cdctest.DB, names ...string) *plants {
	t.Helper()
	p := &plants{db: d}
	for _, n := range names {
		p.table(t, ctx, n, "")
	}
	return p
}

// artifactNames are the names planted around a_b in every mode.
func artifactNames() []string {
	return []string{"_weir_stage_a_b_x", "_weir_stage_a_b_12345678", "_weir_old_a_b_backup", "_weir_old_a_b_2024",
		"_weir_old_a_b_12345678", "_weir_lockdead_a_b_12345678", "aXb", "_weir_stage_a_b",
		"_weir_cdcin_a_b", "a_b__weir_stage", "a_b_weir_tmp_12345678"}
}

func (p *plants) table(t *testing.T, ctx context.Context, name, comment string) {
	t.Helper()
	d := p.db
	switch d.Kind {
	case "clickhouse":
		d.Exec(t, ctx, "CREATE TABLE "+d.Table(name)+" (v Int32) ENGINE = MergeTree ORDER BY tuple()")
	case "mysql":
		d.Exec(t, ctx, "CREATE TABLE "+d.Table(name)+" (v INT) COMMENT = '"+comment+"'")
	default:
		d.Exec(t, ctx, "CREATE TABLE "+d.Table(name)+" (v INT)")
		if comment != "" {
			d.Exec(t, ctx, "COMMENT ON TABLE "+d.Table(name)+" IS '"+strings.ReplaceAll(comment, "'", "''")+"'")
		}
	}
	d.Exec(t, ctx, "INSERT INTO "+d.Table(name)+" VALUES (1)")
	p.names = append(p.names, name)
}

func (p *plants) view(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	p.db.Exec(t, ctx, "CREATE VIEW "+p.db.Table(name)+" AS SELECT 1 AS v")
	p.names = append(p.names, name)
}

// liveStage plants the staging table of a live run on aXb as weir names
// and marks it (the comment a run on a_b must not take for its own).
func (p *plants) liveStage(t *testing.T, ctx context.Context) {
	ref := fmt.Sprintf("%q.%q", p.db.Schema, "aXb")
	if p.db.Kind == "mysql" {
		ref = fmt.Sprintf("`%s`.`%s`", p.db.Schema, "aXb")
	}
	comment := "weir:stage dest=" + ref + " run=87654321 since=2026-01-01T00:00:00Z"
	if p.db.Kind == "mysql" { // its mark names the lock's connection too
		comment = "weir:stage dest=" + ref + " run=87654321 conn=1 since=2026-01-01T00:00:00Z"
	}
	p.table(t, ctx, "_weir_stage_aXb_87654321", comment)
}

// check fails the test for each planted object that is gone or changed.
func (p *plants) check(t *testing.T, ctx context.Context, step string) {
	t.Helper()
	for _, n := range p.names {
		q := fmt.Sprintf("SELECT count(*) FROM %s WHERE v = 1", p.db.Table(n))
		if p.db.Kind == "clickhouse" {
			q = fmt.Sprintf("SELECT toString(count()) FROM %s WHERE v = 1", p.db.Table(n))
		}
		exists := p.db.Query(t, ctx, p.db.CountSQL(n, ""))
		if exists != "1" {
			t.Errorf("%s: the user's %s is gone", step, n)
			continue
		}
		if got := p.db.Query(t, ctx, q); got != "1" {
			t.Errorf("%s: the user's %s holds %s rows with v = 1, want 1", step, n, got)
		}
	}
}

// TestOwnership_PlantedArtifactsSurvive: user tables and views named like
// weir's staging, replaced, lock and baseline tables, and a concurrent
// run's staging table on a name that differs in a _ position, survive
// replace, append, merge, a log_based bootstrap and its next run, and a
// changelog bootstrap and its next run, into PostgreSQL, MariaDB and
// ClickHouse. A user object where weir must create its own (the
// changelog's <table>__weir_base, a table or a view of its own named
// <table>__current) is refused with bad input naming it, and left as it
// was.
func TestOwnership_PlantedArtifactsSurvive(t *testing.T) {
	t.Run("bigquery", plantedBigQuery)
	for _, kind := range []string{"postgres", "mysql", "clickhouse"} {
		t.Run(kind, func(t *testing.T) {
			ctx := routestest.Context(t, 3*time.Minute)
			src := cdctest.Open(t, ctx, "postgres")
			src.Exec(t, ctx, "CREATE TABLE "+src.Table("a_b")+" (id bigint PRIMARY KEY, v text)")
			next := 0
			addRows := func() {
				for i := 0; i < 3; i++ {
					next++
					src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (%d, 'v%d')", src.Table("a_b"), next, next))
				}
			}
			addRows()
			planted := func(d *cdctest.DB) *plants {
				p := plant(t, ctx, d, artifactNames()...)
				p.view(t, ctx, "_weir_old_a_b_view")
				p.view(t, ctx, "_weir_stage_a_b_view")
				if kind != "clickhouse" {
					p.liveStage(t, ctx)
				}
				return p
			}
			opts := func(d *cdctest.DB, mode routes.Mode, changelog bool) weir.TransferOptions {
				return weir.TransferOptions{Tables: []string{src.Schema + ".a_b"}, DestSchema: d.Schema, Mode: mode, Changelog: changelog}
			}

			dst := cdctest.Open(t, ctx, kind)
			p := planted(dst)
			for _, mode := range []routes.Mode{routes.ModeReplace, routes.ModeAppend, routes.ModeMerge, routes.ModeReplace} {
				if mode == routes.ModeMerge && kind == "clickhouse" {
					continue // merge needs a ReplacingMergeTree the replace did not make
				}
				if _, err := weir.Transfer(ctx, src.URL, dst.URL, opts(dst, mode, false)); err != nil {
					t.Fatalf("%s: %v", mode, err)
				}
				p.check(t, ctx, string(mode))
				addRows()
			}

			for _, changelog := range []bool{false, true} {
				d := cdctest.Open(t, ctx, kind)
				p := planted(d)
				o := opts(d, routes.ModeLogBased, changelog)
				t.Cleanup(func() { weir.ResetLogBased(context.WithoutCancel(ctx), src.URL, d.URL, o) })
				for _, step := range []string{"bootstrap", "next run"} {
					if _, err := weir.Transfer(ctx, src.URL, d.URL, o); err != nil {
						t.Fatalf("log_based changelog=%v %s: %v", changelog, step, err)
					}
					p.check(t, ctx, fmt.Sprintf("log_based changelog=%v %s", changelog, step))
					addRows()
				}
			}

			for _, name := range []string{"a_b__weir_base", "a_b__current", "a_b__current (a view)"} {
				d := cdctest.Open(t, ctx, kind)
				p := &plants{db: d}
				if view, ok := strings.CutSuffix(name, " (a view)"); ok {
					name = view
					p.view(t, ctx, name)
				} else {
					p.table(t, ctx, name, "")
				}
				o := opts(d, routes.ModeLogBased, true)
				t.Cleanup(func() { weir.ResetLogBased(context.WithoutCancel(ctx), src.URL, d.URL, o) })
				_, err := weir.Transfer(ctx, src.URL, d.URL, o)
				if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), name) {
					t.Errorf("changelog with a user table %s in the way: err = %v, want bad input naming it", name, err)
				}
				p.check(t, ctx, "changelog refused by "+name)
			}
		})
	}
}

// plantedBigQuery: user tables in a BigQuery dataset named like weir's
// staging and lock tables of a_b, and the live staging table of a run on
// aXb (named and described as weir marks its own), survive replace and
// append into a_b (the emulator cannot MERGE: docs/bigquery.md). A leftover
// staging table is dropped only when its description marks it as a_b's.
func plantedBigQuery(t *testing.T) {
	ctx := routestest.Context(t, 3*time.Minute)
	f := bigquerytest.New(t)
	src := cdctest.Open(t, ctx, "postgres")
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("a_b")+" (id bigint PRIMARY KEY, v text)")
	next := 0
	addRows := func() {
		for i := 0; i < 3; i++ {
			next++
			src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (%d, 'v%d')", src.Table("a_b"), next, next))
		}
	}
	addRows()
	plant := func(name, desc string) {
		md := &bq.TableMetadata{Schema: bq.Schema{{Name: "v", Type: bq.IntegerFieldType}}, Description: desc}
		if err := f.Client.Dataset(f.Dataset).Table(name).Create(ctx, md); err != nil {
			t.Fatalf("plant %s: %v", name, err)
		}
		f.Exec(t, ctx, "INSERT INTO "+f.Ident(name)+" (v) VALUES (1)")
	}
	names := artifactNames()
	for _, n := range names {
		plant(n, "")
	}
	described := map[string]string{ // names with the description of a weir staging table of another table
		"_weir_stage_aXb_87654321": "weir staging table of " + f.Dataset + ".aXb, run 87654321",
		"_weir_stage_a_b_backup2":  "weir staging table of " + f.Dataset + ".a_b_backup2, run x",
	}
	for n, d := range described {
		plant(n, d)
		names = append(names, n)
	}
	for _, mode := range []routes.Mode{routes.ModeReplace, routes.ModeAppend, routes.ModeReplace} {
		opts := weir.TransferOptions{Tables: []string{src.Schema + ".a_b"}, DestTable: f.Dataset + ".a_b", Mode: mode}
		if _, err := weir.Transfer(ctx, src.URL, f.URL(), opts); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		for _, n := range names {
			if !f.Exists(t, ctx, n) {
				t.Errorf("%s: the user's %s is gone", mode, n)
				continue
			}
			if rows := f.Query(t, ctx, "SELECT COUNT(*) FROM "+f.Ident(n)+" WHERE v = 1"); len(rows) != 1 || fmt.Sprint(rows[0][0]) != "1" {
				t.Errorf("%s: the user's %s holds %v rows with v = 1, want 1", mode, n, rows)
			}
		}
		addRows()
	}
}
