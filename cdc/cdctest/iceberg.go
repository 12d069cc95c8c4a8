package cdctest

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/routes"
	wice "github.com/weirhq/weir/routes/iceberg" // iceberg:// destinations
	_ "github.com/weirhq/weir/routes/mysql"      // Rows of a MySQL source
	_ "github.com/weirhq/weir/routes/objstore"   // file:// destinations
	_ "github.com/weirhq/weir/routes/postgres"
)

// openIceberg makes the test's Iceberg catalog: an embedded SQLite catalog
// and a file warehouse in the test's temp dir (removed with it); Schema is
// the namespace the test's tables go to.
func (d *DB) openIceberg(t *testing.T) {
	dir := t.TempDir()
	// lease=5s: a run killed by a test blocks the next one 5 s, not a minute.
	d.URL = "iceberg://?catalog=sql&uri=sqlite://" + dir + "/catalog.db&warehouse=file://" + dir + "/warehouse&lease=5s"
}

// Rows reads a table through weir's routes (any kind: the comparison of
// a source and an Iceberg destination, where no SQL runs on one side) and
// renders each row as the canonical text of cols, '|'-separated, sorted.
// Canonical text, by Arrow type, so that the same value reads the same
// from every route: NULL \N; integers of any width and sign in decimal;
// floats shortest round-trip ('g', their own width); booleans true/false;
// decimals exact with their scale; strings as they are; binary in upper
// hex (fixed-size too; a UUID as 8-4-4-4-12 hex); timestamps in UTC as 2006-01-02 15:04:05.000000 (with or without
// a zone), PostgreSQL's ±infinity sentinels as infinity, -infinity; dates 2006-01-02 (the same); times 15:04:05.000000. A type outside this
// list fails the test (no silent fallback).
func (d *DB) Rows(t testing.TB, ctx context.Context, table string, cols []string) []string {
	t.Helper()
	var out []string
	d.scan(t, ctx, table, cols, func(*routes.TableInfo) {}, func(rec arrow.RecordBatch, i int) {
		cells := make([]string, rec.NumCols())
		for c := range cells {
			cells[c] = canonical(t, rec.Column(c), i)
		}
		out = append(out, strings.Join(cells, "|"))
	})
	sort.Strings(out)
	return out
}

// canonical is one cell's canonical text (see Rows).
func canonical(t testing.TB, a arrow.Array, i int) string {
	if a.IsNull(i) {
		return `\N`
	}
	if ext, ok := a.(array.ExtensionArray); ok {
		if ext.ExtensionType().ExtensionName() == "arrow.uuid" {
			return a.ValueStr(i) // 8-4-4-4-12 hex, as PostgreSQL prints it
		}
		a = ext.Storage()
	}
	switch a := a.(type) {
	case *array.Int8, *array.Int16, *array.Int32, *array.Int64,
		*array.Uint8, *array.Uint16, *array.Uint32, *array.Uint64, *array.String, *array.LargeString:
		return a.ValueStr(i)
	case *array.Float32:
		return strconv.FormatFloat(float64(a.Value(i)), 'g', -1, 32)
	case *array.Float64:
		return strconv.FormatFloat(a.Value(i), 'g', -1, 64)
	case *array.Boolean:
		return strconv.FormatBool(a.Value(i))
	case *array.Decimal128:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Decimal256:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal256Type).Scale)
	case *array.Binary:
		return strings.ToUpper(hex.EncodeToString(a.Value(i)))
	case *array.LargeBinary:
		return strings.ToUpper(hex.EncodeToString(a.Value(i)))
	case *array.FixedSizeBinary:
		return strings.ToUpper(hex.EncodeToString(a.Value(i)))
	case *array.Timestamp:
		if inf := routes.Infinity(array.NewSlice(a, int64(i), int64(i+1))); inf != "" { // the postgres route's sentinels
			return inf
		}
		unit := a.DataType().(*arrow.TimestampType).Unit
		return a.Value(i).ToTime(unit).UTC().Format("2006-01-02 15:04:05.000000")
	case *array.Date32:
		if inf := routes.Infinity(array.NewSlice(a, int64(i), int64(i+1))); inf != "" {
			return inf
		}
		return a.Value(i).ToTime().Format("2006-01-02")
	case array.ListLike: // [elem,…], each element's canonical text
		start, end := a.ValueOffsets(i)
		elems := make([]string, 0, end-start)
		for k := start; k < end; k++ {
			elems = append(elems, canonical(t, a.ListValues(), int(k)))
		}
		return "[" + strings.Join(elems, ",") + "]"
	case *array.Duration: // microseconds, the unit MySQL's TIME has
		unit := a.DataType().(*arrow.DurationType).Unit
		return strconv.FormatInt(int64(a.Value(i))*int64(unit.Multiplier())/1000, 10)
	case *array.MonthDayNanoInterval: // PostgreSQL's interval: microseconds when it has no months
		v := a.Value(i)
		if v.Months != 0 {
			return fmt.Sprintf("%dmonths %ddays %dns", v.Months, v.Days, v.Nanoseconds)
		}
		return strconv.FormatInt(int64(v.Days)*86400e6+v.Nanoseconds/1000, 10)
	case *array.Time64:
		unit := a.DataType().(*arrow.Time64Type).Unit
		d := time.Duration(int64(a.Value(i)) * int64(unit.Multiplier()))
		if d == 24*time.Hour { // PostgreSQL's 24:00:00, not a wrap to 00:00
			return "24:00:00.000000"
		}
		return time.Time{}.Add(d).Format("15:04:05.000000")
	}
	t.Fatalf("cdctest: no canonical text for %s", a.DataType())
	return ""
}

// RowsHash is "count:md5" of Rows: the rows joined with newlines.
func (d *DB) RowsHash(t testing.TB, ctx context.Context, table string, cols []string) string {
	t.Helper()
	rows := d.Rows(t, ctx, table, cols)
	sum := md5.Sum([]byte(strings.Join(rows, "\n")))
	return fmt.Sprintf("%d:%x", len(rows), sum)
}

// icebergLogOps is LogOps of an Iceberg changelog, read through the
// route: "op key" in (_weir_lsn, _weir_ord, key) order.
func (d *DB) icebergLogOps(t testing.TB, ctx context.Context, table, keyCol string, withBaseline bool) []string {
	t.Helper()
	type op struct{ lsn, key, text string }
	var ops []op
	for _, r := range d.Rows(t, ctx, table, []string{cdc.ColLSN, cdc.ColOrd, cdc.ColOp, keyCol}) {
		f := strings.Split(r, "|")
		if f[2] == string(cdc.OpBaseline) && !withBaseline {
			continue
		}
		ord, _ := strconv.Atoi(f[1])
		key := f[3]
		if key == `\N` {
			key = ""
		}
		ops = append(ops, op{lsn: fmt.Sprintf("%s\x00%010d", f[0], ord), key: key, text: f[2] + " " + key})
	}
	sort.Slice(ops, func(i, j int) bool {
		if ops[i].lsn != ops[j].lsn {
			return ops[i].lsn < ops[j].lsn
		}
		return ops[i].key < ops[j].key
	})
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = o.text
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// needSQL fails a test that runs SQL on Iceberg, which has none.
func (d *DB) needSQL(t testing.TB) {
	t.Helper()
	if d.Kind == "iceberg" || d.Kind == "file" {
		t.Fatalf("cdctest: %s has no SQL: use Rows, RowsHash or LogOps", d.Kind)
	}
}

// CurrentHash derives a changelog's current state the way docs/cdc.md
// has a DuckDB model derive it from an Iceberg log (no views there):
// cdc.CurrentSQL over the log read through the route, run by weir's
// DuckDB; then "count:md5" of its canonical rows, as RowsHash.
func (d *DB) CurrentHash(t testing.TB, ctx context.Context, log string, cols, key []string) string {
	t.Helper()
	src, err := routes.OpenSource(ctx, d.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	info, err := src.Probe(ctx, d.Ref(log))
	if err != nil {
		t.Fatalf("probe %s: %v", log, err)
	}
	recs := readAll(t, ctx, src, info)
	db, err := duck.Open(ctx, duck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rdr, err := array.NewRecordReader(info.Schema(), recs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Load(ctx, "log", rdr); err != nil { // a table: views over readers take SELECT * only
		t.Fatal(err)
	}
	ct := &cdc.Table{Columns: cols}
	for _, k := range key {
		ct.Key = append(ct.Key, slices.Index(cols, k))
	}
	out, err := db.Query(ctx, cdc.CurrentSQL(ct, duck.Ident, "log"))
	if err != nil {
		t.Fatalf("current state of %s: %v", log, err)
	}
	defer out.Release()
	var rows []string
	for out.Next() {
		rec := out.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			cells := make([]string, rec.NumCols())
			for c := range cells {
				cells[c] = canonical(t, rec.Column(c), i)
			}
			rows = append(rows, strings.Join(cells, "|"))
		}
	}
	if err := out.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(rows)
	sum := md5.Sum([]byte(strings.Join(rows, "\n")))
	return fmt.Sprintf("%d:%x", len(rows), sum)
}

// readAll reads a whole table through its route.
func readAll(t testing.TB, ctx context.Context, src routes.Source, info *routes.TableInfo) []arrow.RecordBatch {
	t.Helper()
	ranges, err := src.Plan(ctx, info, routes.PlanOptions{Pipes: 1})
	if err != nil {
		t.Fatal(err)
	}
	var recs []arrow.RecordBatch
	for _, r := range ranges {
		s, err := src.Read(ctx, r, routes.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for s.Next() {
			rec := s.RecordBatch()
			rec.Retain()
			recs = append(recs, rec)
		}
		err = s.Err()
		s.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	return recs
}

// CopyFrom loads src's table into d's table dest with weir's replace: the
// way a test makes a table in d that no SQL can create there (an Iceberg
// table of the user's, made by another load).
func (d *DB) CopyFrom(t testing.TB, ctx context.Context, src *DB, table, dest string) {
	t.Helper()
	s, err := routes.OpenSource(ctx, src.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dst, err := routes.OpenDestination(ctx, d.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	spec := routes.CopySpec{Table: src.Ref(table), DestTable: d.Ref(dest), Mode: routes.ModeReplace, RunID: routes.NewRunID()}
	if _, err := routes.Copy(ctx, s, dst, spec); err != nil {
		t.Fatalf("copy %s into %s: %v", table, dest, err)
	}
}

// DropTable drops one table of the test's schema (an Iceberg table through
// its catalog, since no SQL runs there).
func (d *DB) DropTable(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	if d.Kind != "iceberg" {
		d.Exec(t, ctx, "DROP TABLE "+d.Table(name))
		return
	}
	dst, err := routes.OpenDestination(ctx, d.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if err := dst.(*wice.Endpoint).Catalog().DropTable(ctx, table.Identifier{d.Schema, name}); err != nil {
		t.Fatalf("drop iceberg table %s: %v", name, err)
	}
}
