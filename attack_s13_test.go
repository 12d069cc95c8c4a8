package weir_test

import (
	"errors"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// Attack tests of session 13, by an outside tester: a merge into a
// MariaDB table the user made. Each failed on main with exit 0 and rows
// lost.

// attackS13Merge runs a PostgreSQL table s (id, k, v) as a merge by key
// into the MariaDB table d, which the test has created, and returns the
// run's error and d's rows afterwards.
func attackS13Merge(t *testing.T, srcRows, destDDL, destRows string, key []string) (error, string) {
	t.Helper()
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "mysql")
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("s")+" (id bigint PRIMARY KEY, k text NOT NULL, v text)")
	src.Exec(t, ctx, "INSERT INTO "+src.Table("s")+" VALUES "+srcRows)
	dst.Exec(t, ctx, "CREATE TABLE "+dst.Table("d")+" "+destDDL)
	if destRows != "" {
		dst.Exec(t, ctx, "INSERT INTO "+dst.Table("d")+" VALUES "+destRows)
	}
	opts := weir.TransferOptions{Tables: []string{src.Schema + ".s"}, DestTable: dst.Schema + ".d", Mode: routes.ModeMerge,
		Cursor: "id", PrimaryKey: key}
	_, err := weir.Transfer(ctx, src.URL, dst.URL, opts)
	return err, dst.Query(t, ctx, "SELECT COALESCE(GROUP_CONCAT(CONCAT_WS('|', id, HEX(k), v) ORDER BY id SEPARATOR ' '), '') FROM "+dst.Table("d"))
}

// TestAttackS13_MySQLMergeCaseInsensitiveKey: MariaDB's default collation
// (utf8mb4_general_ci, PAD SPACE) holds 'a' = 'A' = 'a ' in a key. A
// PostgreSQL source brings them as three keys; the staging table (binary
// collation) takes all three, and INSERT … ON DUPLICATE KEY UPDATE then
// folds them into one row of the user's table: two source rows gone,
// exit 0. Want: the three rows, or bad input (exit 2, the table as it was).
func TestAttackS13_MySQLMergeCaseInsensitiveKey(t *testing.T) {
	err, got := attackS13Merge(t, "(1, 'a', 'one'), (2, 'A', 'two'), (3, 'a ', 'three')",
		"(id bigint, k varchar(20) PRIMARY KEY, v text) DEFAULT CHARSET utf8mb4 COLLATE utf8mb4_general_ci", "", []string{"k"})
	if err == nil {
		if got != "1|61|one 2|41|two 3|6120|three" {
			t.Fatalf("exit 0, yet the destination holds %q: three source keys, want three rows or a refusal", got)
		}
		return
	}
	if !errors.Is(err, routes.ErrBadInput) {
		t.Fatalf("got %v, want bad input (exit 2)", err)
	}
	t.Log(err)
	if got != "" {
		t.Fatalf("refused, yet the destination holds %q", got)
	}
}

// TestAttackS13_MySQLMergeOtherUniqueKey: ON DUPLICATE KEY UPDATE fires on
// any unique key of the destination, not only the merge key. The user's
// table has UNIQUE (k) besides PRIMARY KEY (id); the source brings id 2
// with the k that id 1 holds: MariaDB updates row 1 in place (v
// overwritten) and id 2 never lands, exit 0. PostgreSQL's ON CONFLICT (id)
// fails on the other index instead. Want: bad input naming the table, or
// the rows as the source has them (impossible here), never a silent
// rewrite of another key's row.
func TestAttackS13_MySQLMergeOtherUniqueKey(t *testing.T) {
	err, got := attackS13Merge(t, "(2, 'x', 'two')",
		"(id bigint PRIMARY KEY, k varchar(20) NOT NULL UNIQUE, v text)", "(1, 'x', 'one')", []string{"id"})
	if err == nil {
		t.Fatalf("exit 0, and the destination holds %q (id 1 had v 'one'; id 2 was brought)", got)
	}
	if !errors.Is(err, routes.ErrBadInput) {
		t.Fatalf("got %v, want bad input (exit 2)", err)
	}
	t.Log(err)
	if got != "1|78|one" {
		t.Fatalf("refused, yet the destination holds %q, want it as it was", got)
	}
}

// TestAttackS13_MySQLMergeCaseInsensitiveKeyHeld: the refusal above is
// only for keys the destination folds: a merge into the same
// case-insensitive table whose keys are distinct there updates and
// inserts as before.
func TestAttackS13_MySQLMergeCaseInsensitiveKeyHeld(t *testing.T) {
	err, got := attackS13Merge(t, "(1, 'a', 'one'), (2, 'B', 'two')",
		"(id bigint, k varchar(20) PRIMARY KEY, v text) DEFAULT CHARSET utf8mb4 COLLATE utf8mb4_general_ci", "(0, 'a', 'old')", []string{"k"})
	if err != nil || got != "1|61|one 2|42|two" {
		t.Fatalf("got %v, destination %q; want nil and the two rows", err, got)
	}
}

// TestAttackS13_PostgresMergeFoldingKey: a PostgreSQL table of the
// user's whose key folds 'a' and 'A' into one — the key column has a
// nondeterministic (case-insensitive) ICU collation, or (attack s13b) the
// column is deterministic but its only unique index is built with such a
// collation (UNIQUE (k COLLATE ci), which ON CONFLICT (k) infers whatever
// its collation). A first merge lands the source's 'a'; the source then
// gains a distinct row 'A', and the next merge's ON CONFLICT updated the
// row of 'a' with it: the source's two rows became one, exit 0. Want: bad
// input (exit 2), the destination as the first run left it; an update of
// 'a' itself still lands.
func TestAttackS13_PostgresMergeFoldingKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		ddl  func(table, collation string) []string
	}{
		{"key-collation", func(d, ci string) []string {
			return []string{"CREATE TABLE " + d + " (k text COLLATE " + ci + " PRIMARY KEY, v bigint NOT NULL)"}
		}},
		{"unique-index-collation", func(d, ci string) []string {
			return []string{"CREATE TABLE " + d + " (k text NOT NULL, v bigint NOT NULL)",
				"CREATE UNIQUE INDEX ON " + d + " (k COLLATE " + ci + ")"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := routestest.Context(t, 2*time.Minute)
			src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "postgres")
			src.Exec(t, ctx, "CREATE TABLE "+src.Table("s")+" (k text PRIMARY KEY, v bigint NOT NULL)")
			src.Exec(t, ctx, "INSERT INTO "+src.Table("s")+" VALUES ('a', 1)")
			dst.Exec(t, ctx, "CREATE COLLATION "+dst.Schema+".ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)")
			for _, q := range tc.ddl(dst.Table("d"), dst.Schema+".ci") {
				dst.Exec(t, ctx, q)
			}
			opts := weir.TransferOptions{Tables: []string{src.Schema + ".s"}, DestTable: dst.Schema + ".d", Mode: routes.ModeMerge, Cursor: "v"}
			rows := func() string {
				return dst.Query(t, ctx, "SELECT COALESCE(string_agg(k || '=' || v, ' ' ORDER BY v), '') FROM "+dst.Table("d"))
			}
			if _, err := weir.Transfer(ctx, src.URL, dst.URL, opts); err != nil || rows() != "a=1" {
				t.Fatalf("first run: %v, destination %q", err, rows())
			}
			src.Exec(t, ctx, "INSERT INTO "+src.Table("s")+" VALUES ('A', 2)")
			_, err := weir.Transfer(ctx, src.URL, dst.URL, opts)
			if !errors.Is(err, routes.ErrBadInput) || rows() != "a=1" {
				t.Fatalf("second run: %v, destination %q; want bad input and a=1 kept (the source has a=1 and A=2)", err, rows())
			}
			t.Log(err)
			src.Exec(t, ctx, "DELETE FROM "+src.Table("s")+" WHERE k = 'A'")
			src.Exec(t, ctx, "UPDATE "+src.Table("s")+" SET v = 3 WHERE k = 'a'")
			if _, err := weir.Transfer(ctx, src.URL, dst.URL, opts); err != nil || rows() != "a=3" {
				t.Fatalf("an update of a itself: %v, destination %q", err, rows())
			}
		})
	}
}

// TestAttackS13_MySQLMergeValueKeys: the check behind the refusals above
// compares only collated key columns byte for byte: a user table keyed by
// (DATETIME(6), DECIMAL(12,4)) that a source's timestamp and numeric(10,2)
// merge into by value still updates, not refused because the server
// prints the two types' values differently.
func TestAttackS13_MySQLMergeValueKeys(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "mysql")
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("s")+" (seq bigint NOT NULL, ts timestamp NOT NULL, amt numeric(10,2) NOT NULL, v text, PRIMARY KEY (ts, amt))")
	src.Exec(t, ctx, "INSERT INTO "+src.Table("s")+" VALUES (1, '2024-01-01 10:00:00', 1.50, 'new')")
	dst.Exec(t, ctx, "CREATE TABLE "+dst.Table("d")+" (seq bigint, ts datetime(6) NOT NULL, amt decimal(12,4) NOT NULL, v text, PRIMARY KEY (ts, amt))")
	dst.Exec(t, ctx, "INSERT INTO "+dst.Table("d")+" VALUES (0, '2024-01-01 10:00:00', 1.5, 'old')")
	opts := weir.TransferOptions{Tables: []string{src.Schema + ".s"}, DestTable: dst.Schema + ".d", Mode: routes.ModeMerge, Cursor: "seq"}
	_, err := weir.Transfer(ctx, src.URL, dst.URL, opts)
	if got := dst.Query(t, ctx, "SELECT GROUP_CONCAT(CONCAT_WS('|', seq, ts, amt, v)) FROM "+dst.Table("d")); err != nil || got != "1|2024-01-01 10:00:00.000000|1.5000|new" {
		t.Fatalf("got %v, destination %q; want the row updated", err, got)
	}
}

// TestAttackS13_MySQLMergeBinaryCollations: the fold check is skipped only
// where nothing can fold (canFold). utf8mb4_bin is binary but PAD SPACE:
// it holds 'a' = 'a ', so that merge must still be refused; a
// utf8mb4_nopad_bin key (what weir creates) keeps 'a' and 'a ' apart and
// lands both rows.
func TestAttackS13_MySQLMergeBinaryCollations(t *testing.T) {
	for _, tc := range []struct {
		collation string
		refused   bool
	}{{"utf8mb4_bin", true}, {"utf8mb4_nopad_bin", false}} {
		t.Run(tc.collation, func(t *testing.T) {
			err, got := attackS13Merge(t, "(1, 'a', 'one'), (2, 'a ', 'two')",
				"(id bigint, k varchar(20) PRIMARY KEY, v text) DEFAULT CHARSET utf8mb4 COLLATE "+tc.collation, "", []string{"k"})
			switch {
			case tc.refused && !errors.Is(err, routes.ErrBadInput):
				t.Fatalf("got %v (destination %q), want bad input: 'a' and 'a ' are one key here", err, got)
			case tc.refused && got != "":
				t.Fatalf("refused, yet the destination holds %q", got)
			case !tc.refused && (err != nil || got != "1|61|one 2|6120|two"):
				t.Fatalf("got %v, destination %q; want nil and both rows", err, got)
			}
		})
	}
}
