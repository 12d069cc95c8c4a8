package routestest

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/where"
)

// PushdownTable is a table for the pushdown tests of SQL sources: an
// integer, a decimal, a string, a boolean, a timestamp and a column whose
// name needs quoting.
func PushdownTable(scheme string) *routes.TableInfo {
	return &routes.TableInfo{Scheme: scheme, Ref: routes.TableRef{Schema: "s", Name: "t"}, Columns: []routes.Column{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "we\"ird`'", Type: arrow.BinaryTypes.String, Nullable: true},
	}}
}

// PushdownFilters are the filters the pushdown tests render, one per
// rule of where.SQL: an integer bound, a string = (with a quote) beside a
// timestamp that stays on the client, a decimal OR a boolean, only a
// timestamp (nothing pushed), and IS NULL on a name that needs quoting.
var PushdownFilters = []string{
	`id > 1999990`,
	`name = 'it''s' AND ts >= '2024-01-01'`,
	`amount >= 12.5 OR flag = TRUE`,
	`ts >= '2024-01-01'`,
	`NOT "we""ird` + "`" + `'" IS NULL AND id <= -9223372036854775808`,
}

// PushedSQL opens ReadWhere for each of PushdownFilters on a range of
// PushdownTable with predicate pred, and returns the statement each
// stream built (sql reads it from the stream), from its FROM on (the
// select list is each source's own business).
func PushedSQL(t *testing.T, pd where.Pushdown, info *routes.TableInfo, pred string, sql func(routes.Stream) string) []string {
	t.Helper()
	var out []string
	for _, f := range PushdownFilters {
		e, err := where.Parse(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := pd.ReadWhere(context.Background(), routes.Range{Table: info, Predicate: pred}, routes.ReadOptions{}, e)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		q := sql(s)
		if i := strings.Index(q, " FROM "); i >= 0 {
			q = q[i+1:]
		}
		out = append(out, q)
		s.Release()
	}
	return out
}
