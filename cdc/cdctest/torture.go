package cdctest

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

// The type torture harnesses (bulk: torture_test.go at the repository
// root; CDC: cdc/pgwal and cdc/binlog types_test.go) share what is here:
// the shape of a case, and one comparison of a destination table with its
// source, value by value.

// Case is one column type of a source and its edge values, each case in a
// table of its own, t_<Name> (id, v): row i+1 holds Values[i], and one
// more row holds NULL.
type Case struct {
	Name   string
	Type   string // the column's type in the source's DDL
	Values []Value
	// Refuse names the destination kinds ("mysql,clickhouse") that cannot
	// hold some value: a run there must be refused as bad input naming
	// the table and column v (exit 2), never land altered. "source": the
	// source itself refuses to read the values (with every destination).
	Refuse string
}

// Value is one edge value: Lit as the source's SQL literal, Want the
// canonical text (DB.Rows) of what the source's server itself holds.
type Value struct{ Lit, Want string }

// Refuses reports whether a run of the case into kind must be refused.
func (c Case) Refuses(kind string) bool {
	r := strings.Split(c.Refuse, ",")
	return slices.Contains(r, kind) || slices.Contains(r, "source")
}

// Table is the case's table name.
func (c Case) Table() string { return "t_" + c.Name }

// Want is the case's rows in canonical text by id: v's value, the NULL
// row last (as Null).
func (c Case) Want() map[string][]string {
	m := map[string][]string{}
	for i, v := range c.Values {
		m[strconv.Itoa(i+1)] = []string{v.Want}
	}
	m[strconv.Itoa(len(c.Values)+1)] = []string{Null}
	return m
}

// Insert is the case's VALUES list: (id, literal) rows and the NULL row.
func (c Case) Insert() string {
	var rows []string
	for i, v := range c.Values {
		rows = append(rows, fmt.Sprintf("(%d, %s)", i+1, v.Lit))
	}
	return strings.Join(append(rows, fmt.Sprintf("(%d, NULL)", len(c.Values)+1)), ", ")
}

// Cells reads columns cols of a table through its route (any kind), keyed
// by the text of column key: each row's canonical text per column (see
// Rows) and the columns' Arrow types.
func (d *DB) Cells(t testing.TB, ctx context.Context, table, key string, cols []string) (map[string][]string, []arrow.DataType) {
	t.Helper()
	var types []arrow.DataType
	out := map[string][]string{}
	d.scan(t, ctx, table, append([]string{key}, cols...), func(info *routes.TableInfo) {
		for _, c := range cols {
			col, ok := info.Column(c)
			if !ok {
				t.Fatalf("%s has no column %s", table, c)
			}
			types = append(types, col.Type)
		}
	}, func(rec arrow.RecordBatch, i int) {
		cells := make([]string, rec.NumCols())
		for c := range cells {
			cells[c] = Null
			if !rec.Column(c).IsNull(i) {
				cells[c] = canonical(t, rec.Column(c), i)
			}
		}
		if _, dup := out[cells[0]]; dup {
			t.Errorf("%s: two rows with %s = %s", table, key, cells[0])
		}
		out[cells[0]] = cells[1:]
	})
	return out, types
}

// Null is a NULL cell of Cells: no text a string column holds ('\N' is
// a string).
const Null = "\x00NULL"

// scan reads columns cols of a table through its route: open, probe
// (probed sees the table before a row is read), plan one pipe, and row
// for each row of each range.
func (d *DB) scan(t testing.TB, ctx context.Context, table string, cols []string, probed func(*routes.TableInfo), row func(rec arrow.RecordBatch, i int)) {
	t.Helper()
	src, err := routes.OpenSource(ctx, d.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	info, err := src.Probe(ctx, d.Ref(table))
	if err != nil {
		t.Fatalf("probe %s: %v", table, err)
	}
	probed(info)
	ranges, err := src.Plan(ctx, info, routes.PlanOptions{Pipes: 1})
	if err != nil {
		t.Fatalf("plan %s: %v", info.Ref, err)
	}
	for _, r := range ranges {
		readRange(t, ctx, src, r, cols, row)
	}
}

func readRange(t testing.TB, ctx context.Context, src routes.Source, r routes.Range, cols []string, row func(rec arrow.RecordBatch, i int)) {
	t.Helper()
	s, err := src.Read(ctx, r, routes.ReadOptions{Columns: cols})
	if err != nil {
		t.Fatalf("read %s: %v", r.Table.Ref, err)
	}
	defer s.Release()
	for s.Next() {
		rec := s.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			row(rec, i)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("read %s: %v", r.Table.Ref, err)
	}
}

// Compare checks columns cols of table in dst against want (id → each
// column's canonical text) value by value, after only the representation
// changes a destination is documented to make (Adapt). srcTypes are the
// columns' Arrow types at the source. Every differing, missing or extra
// row is reported, naming the table, the row and the column.
func Compare(t testing.TB, ctx context.Context, dst *DB, table string, cols []string, srcTypes []arrow.DataType, want map[string][]string, step string) {
	t.Helper()
	got, types := dst.Cells(t, ctx, table, "id", cols)
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			t.Errorf("%s: %s → %s: row id=%s missing", step, table, dst.Kind, id)
			continue
		}
		for c := range cols {
			// a TIME in a String loses trailing fraction zeros: Adapt
			// both sides
			if a := Adapt(srcTypes[c], types[c], g[c]); a != w[c] && a != Adapt(srcTypes[c], types[c], w[c]) {
				t.Errorf("%s: %s.%s (%s → %s %s): id=%s: destination %q, source %q", step, table, cols[c], srcTypes[c], dst.Kind, types[c], id, g[c], w[c])
			}
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("%s: %s: extra row id=%s in %s", step, table, id, dst.Kind)
		}
	}
}

// SourceValues is columns cols of a source table by id, read through
// weir, and their Arrow types: the want of Compare for a CDC test (the
// bulk harness writes its own, the source server's rendering, and checks
// this read against it).
func SourceValues(t testing.TB, ctx context.Context, src *DB, table string, cols []string) (map[string][]string, []arrow.DataType) {
	t.Helper()
	return src.Cells(t, ctx, table, "id", cols)
}

// Adapt renders a destination cell as the source's canonical text where
// the destination holds the value in another documented representation:
// a binary in a String (ClickHouse), as upper hex; a boolean as UInt8
// (ClickHouse 18.16); a TIME as String (ClickHouse), fraction zeros
// trimmed (applied to both sides by Compare); a duration as its clock
// text (Iceberg), as microseconds; a float4 widened to double.
// Anything else is compared as it is.
func Adapt(src, dst arrow.DataType, text string) string {
	if text == Null || arrow.TypeEqual(src, dst) {
		return text
	}
	switch {
	case isBinary(src) && isString(dst):
		return strings.ToUpper(hex.EncodeToString([]byte(text)))
	case src.ID() == arrow.BOOL && (dst.ID() == arrow.UINT8 || dst.ID() == arrow.INT8):
		return map[string]string{"1": "true", "0": "false"}[text]
	case src.ID() == arrow.TIME64 && isString(dst):
		return trimFraction(text)
	case src.ID() == arrow.DURATION && isString(dst): // Iceberg's [-]HH:MM:SS[.ffffff]
		if us, ok := routes.ClockMicros(text); ok {
			return strconv.FormatInt(us, 10)
		}
	case src.ID() == arrow.FLOAT32 && dst.ID() == arrow.FLOAT64:
		if f, err := strconv.ParseFloat(text, 64); err == nil && float64(float32(f)) == f || f != f {
			return strconv.FormatFloat(f, 'g', -1, 32)
		}
	}
	return text
}

func isBinary(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY:
		return true
	}
	return false
}

func isString(t arrow.DataType) bool {
	return t.ID() == arrow.STRING || t.ID() == arrow.LARGE_STRING
}

// trimFraction drops a time's trailing fraction zeros ("00:00:00.000000"
// is "00:00:00").
func trimFraction(s string) string {
	i := strings.LastIndex(s, ".")
	if i < 0 {
		return s
	}
	if frac := strings.TrimRight(s[i+1:], "0"); frac != "" {
		return s[:i+1] + frac
	}
	return s[:i]
}

// Refused checks that a transfer's error refused table as bad input (exit
// 2) naming the table and column v: err is weir.Transfer's joined error,
// table the source table ("schema.t_x").
func Refused(err error, table string) error {
	hit := Failed(err, table)
	switch {
	case hit == nil:
		return fmt.Errorf("%s: not refused", table)
	case !errors.Is(hit, routes.ErrBadInput):
		return fmt.Errorf("%s: failed, but not as bad input (exit 2): %v", table, hit)
	case !strings.Contains(hit.Error(), ".v") && !strings.Contains(hit.Error(), "column v") && !strings.Contains(hit.Error(), `"v"`) && !strings.Contains(hit.Error(), "`v`"):
		return fmt.Errorf("%s: refused without naming column v: %v", table, hit)
	}
	return nil
}

// Exists reports whether table exists at d, probed through its route.
func (d *DB) Exists(t testing.TB, ctx context.Context, table string) bool {
	t.Helper()
	src, err := routes.OpenSource(ctx, d.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	_, err = src.Probe(ctx, d.Ref(table))
	switch {
	case errors.Is(err, routes.ErrNotFound):
		return false
	case err != nil:
		t.Fatalf("probe %s: %v", table, err)
	}
	return true
}

// Failed is the one of a transfer's joined errors that names table
// ("schema.t_x"), or nil.
func Failed(err error, table string) error {
	for _, e := range Unjoin(err) {
		if strings.Contains(e.Error(), table+".") || strings.Contains(e.Error(), table+":") {
			return e
		}
	}
	return nil
}

// Unjoin lists the errors errors.Join joined (err itself otherwise).
func Unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// SameAsBootstrap holds each case's rows in dst that a capture landed
// (ids 1001…, capture names it: "WAL", "binlog") to the rows the bootstrap
// copied from the same values (ids 1…): a replica holds one value however
// its row arrived. The last id of each is the NULL row.
func SameAsBootstrap(t testing.TB, ctx context.Context, dst *DB, cases []Case, capture string) {
	t.Helper()
	for _, c := range cases {
		if dst.Kind == "clickhouse" {
			dst.Exec(t, ctx, "OPTIMIZE TABLE "+dst.Table(c.Table())+" FINAL")
		}
		cells, _ := dst.Cells(t, ctx, c.Table(), "id", []string{"v"})
		for i := range len(c.Values) + 1 {
			boot, got := cells[fmt.Sprint(1+i)], cells[fmt.Sprint(1001+i)]
			if len(boot) != 1 || len(got) != 1 || boot[0] != got[0] {
				lit := "NULL"
				if i < len(c.Values) {
					lit = c.Values[i].Lit
				}
				t.Errorf("%s %s %s: bootstrap %q, %s %q", dst.Kind, c.Type, lit, boot, capture, got)
			}
		}
	}
}
