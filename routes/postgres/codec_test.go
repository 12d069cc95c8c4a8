package postgres

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// codecDB is one test's connection and schema weir_t_<random> on the server
// named by WEIR_TEST_PG.
type codecDB struct {
	conn   *pgx.Conn
	schema string
	ctx    context.Context
}

func newCodecDB(t *testing.T) *codecDB {
	t.Helper()
	url := routestest.ServerURL(t, "WEIR_TEST_PG")
	ctx := routestest.Context(t, 5*time.Minute)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect WEIR_TEST_PG: %v", err)
	}
	db := &codecDB{conn: conn, schema: routestest.Name("weir_t"), ctx: ctx}
	db.exec(t, "CREATE SCHEMA "+db.schema)
	t.Cleanup(func() {
		cctx, cancel := routestest.CleanupContext()
		defer cancel()
		conn.Exec(cctx, "DROP SCHEMA "+db.schema+" CASCADE")
		conn.Close(cctx)
	})
	return db
}

// exec runs statements; %[1]s in them is the schema.
func (db *codecDB) exec(t *testing.T, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if strings.Contains(q, "%[1]s") {
			q = fmt.Sprintf(q, db.schema)
		}
		if _, err := db.conn.Exec(db.ctx, q); err != nil {
			t.Fatalf("%.200s: %v", q, err)
		}
	}
}

func (db *codecDB) copyOut(t *testing.T, query string, w io.Writer) {
	t.Helper()
	sql := fmt.Sprintf("COPY (%s) TO STDOUT (FORMAT binary)", query)
	if _, err := db.conn.PgConn().CopyTo(db.ctx, w, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (db *codecDB) copyIn(t *testing.T, table string, cols []routes.Column, r io.Reader) int64 {
	t.Helper()
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = pgx.Identifier{c.Name}.Sanitize()
	}
	sql := fmt.Sprintf("COPY %s.%s (%s) FROM STDIN (FORMAT binary)", db.schema, table, strings.Join(names, ", "))
	tag, err := db.conn.PgConn().CopyFrom(db.ctx, r, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return tag.RowsAffected()
}

// columns probes a table the way the source does: built-in types keep
// their format_type, the others are read as text (cast in selectList).
func (db *codecDB) columns(t *testing.T, table string) []routes.Column {
	t.Helper()
	rows, err := db.conn.Query(db.ctx, `SELECT attname, format_type(atttypid, atttypmod), attndims > 0 OR format_type(atttypid, atttypmod) LIKE '%[]'
FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`, db.schema+"."+table)
	if err != nil {
		t.Fatal(err)
	}
	var cols []routes.Column
	for rows.Next() {
		var c routes.Column
		var isArray bool
		if err := rows.Scan(&c.Name, &c.NativeType, &isArray); err != nil {
			t.Fatal(err)
		}
		typ, ok := arrowType(c.NativeType)
		if !ok {
			c.NativeType = map[bool]string{false: "text", true: "text[]"}[isArray]
			typ, _ = arrowType(c.NativeType)
		}
		c.Type, c.Nullable = typ, true
		cols = append(cols, c)
	}
	return cols
}

// selectList casts the columns read as text.
func codecSelect(db *codecDB, table string, cols []routes.Column) string {
	exprs := make([]string, len(cols))
	for i, c := range cols {
		exprs[i] = pgx.Identifier{c.Name}.Sanitize()
		if c.NativeType == "text" || c.NativeType == "text[]" {
			exprs[i] += "::" + c.NativeType
		}
	}
	return fmt.Sprintf("SELECT %s FROM %s.%s ORDER BY 1", strings.Join(exprs, ", "), db.schema, table)
}

func (db *codecDB) md5(t *testing.T, table string) string {
	t.Helper()
	var h string
	q := fmt.Sprintf("SELECT md5(string_agg(x::text, '|' ORDER BY id)) FROM %s.%s x", db.schema, table)
	if err := db.conn.QueryRow(db.ctx, q).Scan(&h); err != nil {
		t.Fatal(err)
	}
	return h
}

// createLike creates table with the DDL pgType gives cols from scheme.
func (db *codecDB) createLike(t *testing.T, table string, cols []routes.Column, scheme string) {
	t.Helper()
	defs := make([]string, len(cols))
	for i, c := range cols {
		defs[i] = pgx.Identifier{c.Name}.Sanitize() + " " + pgType(c, scheme)
	}
	db.exec(t, fmt.Sprintf("CREATE TABLE %s.%s (%s)", db.schema, table, strings.Join(defs, ", ")))
}

// decodeAll decodes a COPY stream into batches; the caller releases them.
func decodeAll(t *testing.T, cols []routes.Column, mem memory.Allocator, chunk int, feed func(io.Writer)) []arrow.RecordBatch {
	t.Helper()
	var out []arrow.RecordBatch
	dec := newDecoder(cols, mem, chunk, func(b arrow.RecordBatch) error {
		out = append(out, b)
		return nil
	})
	feed(dec)
	if err := dec.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func releaseAll(bs []arrow.RecordBatch) {
	for _, b := range bs {
		b.Release()
	}
}

// encodeAll encodes batches into one binary COPY stream for cols.
func encodeAll(t *testing.T, cols []routes.Column, batches []arrow.RecordBatch) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	enc := newEncoder(cols, &buf)
	if err := enc.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := enc.Encode(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

// batchColumn returns batch b's column named name.
func batchColumn(t *testing.T, b arrow.RecordBatch, name string) arrow.Array {
	t.Helper()
	idx := b.Schema().FieldIndices(name)
	if len(idx) != 1 {
		t.Fatalf("no column %s", name)
	}
	return b.Column(idx[0])
}

func checkedAlloc(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

var uuidBytes = [16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}

func TestCodec_RoundTripAllTypes(t *testing.T) {
	db := newCodecDB(t)
	mem := checkedAlloc(t)
	db.exec(t, allTypesSQL...)
	cols := db.columns(t, "t")
	var wire bytes.Buffer
	db.copyOut(t, codecSelect(db, "t", cols), &wire)
	batches := decodeAll(t, cols, mem, 1<<20, func(w io.Writer) { w.Write(wire.Bytes()) })
	defer releaseAll(batches)
	if len(batches) < 2 {
		t.Fatalf("%d batches; the huge row should have cut one", len(batches))
	}
	checkAllTypesValues(t, batches)

	db.createLike(t, "t2", cols, Scheme)
	n := db.copyIn(t, "t2", cols, encodeAll(t, cols, batches))
	if n != allTypesRows {
		t.Fatalf("copied %d rows, want %d", n, allTypesRows)
	}
	if a, b := db.md5(t, "t"), db.md5(t, "t2"); a != b {
		t.Fatalf("md5 of t %s != t2 %s", a, b)
	}
}

// TestDecoder_WriteBoundaries feeds the same stream in pieces of every
// awkward size: the batches equal those of one write.
func TestDecoder_WriteBoundaries(t *testing.T) {
	db := newCodecDB(t)
	mem := checkedAlloc(t)
	db.exec(t, allTypesSQL[:2]...)
	db.exec(t, "INSERT INTO %[1]s.t (id, i4, tx, an) SELECT i, i, repeat('x', i), ARRAY[i, NULL]::numeric(10,2)[] FROM generate_series(10, 300) i")
	cols := db.columns(t, "t")
	var wire bytes.Buffer
	db.copyOut(t, codecSelect(db, "t", cols), &wire)
	whole := decodeAll(t, cols, mem, math.MaxInt, func(w io.Writer) { w.Write(wire.Bytes()) })
	defer releaseAll(whole)
	for _, size := range []int{1, 2, 3, 7, 19, 20, 1000, 8191} {
		got := decodeAll(t, cols, mem, math.MaxInt, func(w io.Writer) {
			for p := wire.Bytes(); len(p) > 0; p = p[min(size, len(p)):] {
				if _, err := w.Write(p[:min(size, len(p))]); err != nil {
					t.Fatal(err)
				}
			}
		})
		if len(got) != 1 || !array.RecordEqual(got[0], whole[0]) {
			t.Errorf("writes of %d bytes: batches differ", size)
		}
		releaseAll(got)
	}
}

func TestDecoder_Chunking(t *testing.T) {
	db := newCodecDB(t)
	mem := checkedAlloc(t)
	db.exec(t, `CREATE TABLE %[1]s.big AS SELECT i AS id, md5(i::text) AS s, (i * 1.5)::numeric(12,2) AS n,
		timestamptz '2024-01-01' + i * interval '1 second' AS ts FROM generate_series(1, 200000) i`)
	cols := db.columns(t, "big")
	const chunk = 64 << 10
	var batches, rows, maxRow int64
	dec := newDecoder(cols, mem, chunk, func(b arrow.RecordBatch) error {
		defer b.Release()
		size := int64(encodeAll(t, cols, []arrow.RecordBatch{b}).Len() - copyHeaderLen - 2)
		maxRow = max(maxRow, size/b.NumRows()+1)
		if size > chunk+2*maxRow {
			t.Errorf("batch %d: %d rows, %d bytes > chunk %d + one row", batches, b.NumRows(), size, chunk)
		}
		batches++
		rows += b.NumRows()
		return nil
	})
	db.copyOut(t, codecSelect(db, "big", cols), dec)
	if err := dec.Close(); err != nil {
		t.Fatal(err)
	}
	if rows != 200000 || dec.Rows() != 200000 {
		t.Fatalf("rows %d (Rows() %d), want 200000", rows, dec.Rows())
	}
	if batches < 100 {
		t.Fatalf("%d batches, want many", batches)
	}
	t.Logf("%d batches of ~%d rows", batches, rows/batches)
}

func TestDecoder_Errors(t *testing.T) {
	db := newCodecDB(t)
	tests := []struct {
		name, query, native, want string
	}{
		{"multi-dimensional", `SELECT '{{1,2},{3,4}}'::int[] AS "Grid"`, "integer[]", `2-dimensional array cannot be read as an Arrow list without changing it; cast the column to text in the query ("Grid"::text)`},
		{"lower bound", `SELECT '[0:1]={1,2}'::int[] AS a`, "integer[]", `lower bound other than 1`},
		{"NaN in decimal", `SELECT 'NaN'::numeric(10,2) AS price`, "numeric(10,2)", `column "price": numeric NaN`},
		{"timestamp past Arrow", `SELECT '294276-12-31 23:59:59'::timestamp AS ts`, "timestamp without time zone", `column "ts": timestamp or date out of the range`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := checkedAlloc(t)
			typ, _ := arrowType(tt.native)
			name := strings.Trim(tt.query[strings.LastIndex(tt.query, " ")+1:], `"`)
			cols := []routes.Column{{Name: name, Type: typ, NativeType: tt.native, Nullable: true}}
			// A failed Write makes pgconn close the connection: decode a copy.
			var wire bytes.Buffer
			db.copyOut(t, tt.query, &wire)
			dec := newDecoder(cols, mem, 0, func(b arrow.RecordBatch) error { b.Release(); return nil })
			_, err := dec.Write(wire.Bytes())
			cerr := dec.Close()
			if err == nil || cerr == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v (close %v), want it to contain %q", err, cerr, tt.want)
			}
		})
	}
}

// TestCodec_FromArrow loads Arrow columns shaped like other sources' into a
// table created with pgType, and reads them back in SQL.
func TestCodec_FromArrow(t *testing.T) {
	db := newCodecDB(t)
	mem := checkedAlloc(t)
	rec := foreignBatch(t, mem)
	defer rec.Release()
	cols := make([]routes.Column, rec.NumCols())
	for i, f := range rec.Schema().Fields() {
		native, _ := f.Metadata.GetValue(routes.MetaNativeType)
		cols[i] = routes.Column{Name: f.Name, Type: f.Type, Nullable: true, NativeType: native}
	}
	db.createLike(t, "f", cols, "mysql")
	dest := make([]routes.Column, len(cols))
	for i, c := range cols {
		dest[i] = c
		dest[i].NativeType = pgType(c, "mysql")
	}
	if n := db.copyIn(t, "f", dest, encodeAll(t, dest, []arrow.RecordBatch{rec})); n != 3 {
		t.Fatalf("copied %d rows, want 3", n)
	}
	checkForeignRows(t, db)
}
