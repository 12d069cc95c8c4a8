package generate

import (
	"testing"

	"github.com/weirhq/weir/dagfile"
)

// TestAssetURI: Airflow Asset URIs follow the OpenLineage naming, in the
// form Airflow's providers map to it; connections whose URL is not known
// at generation time (${VAR}, relative paths) keep weir:// names.
func TestAssetURI(t *testing.T) {
	f, err := dagfile.Parse([]byte(`version: 1
connections:
  pg: postgres://u:${PG_PASSWORD}@db.example:5433/shop
  pglit: postgres://db.example/shop?password=${PG_PASSWORD}&sslmode=require
  my: mysql://root@10.0.0.5/app
  ch: clickhouse://ch.example:9000/analytics
  bq: bigquery://my-project
  s3: s3://bucket/raw?region=eu-west-1
  abs: file:///srv/data
  rel: file://./data
  lake: iceberg://?catalog=sql&uri=postgres://cat.example/cat&warehouse=s3://lake-bucket/wh
  rellake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
  env: ${APP_PG_URL}
tasks:
  t:
    transfer: {from: pglit, table: public.orders, to: my, dest_table: app.orders}
`), "weir.yaml", func(string) (string, bool) { return "x", true })
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr, want string
	}{
		{"pg:public.orders", "postgres://db.example:5433/shop/public/orders"},
		{"pglit:s.orders", "postgres://db.example:5432/shop/s/orders"},
		{"my:app.orders", "mysql://10.0.0.5:3306/app/orders"},
		{"ch:analytics.events", "clickhouse://ch.example:9000/analytics/events"},
		{"bq:ds.t", "bigquery://my-project/ds/t"},
		{"s3:orders.parquet", "s3://bucket/raw/orders.parquet"},
		{"abs:orders.csv", "file:///srv/data/orders.csv"},
		{"rel:orders.csv", "weir://rel/orders.csv"},
		{"lake:silver.orders", "s3://lake-bucket/wh/silver.db/orders"},
		{"rellake:silver.orders", "weir://rellake/silver.orders"},
		{"env:public.orders", "weir://env/public.orders"},
	}
	for _, tt := range tests {
		a, err := dagfile.ParseTableAddr(tt.addr)
		if err != nil {
			t.Fatal(err)
		}
		if tt.addr == "s3:orders.parquet" || tt.addr == "abs:orders.csv" || tt.addr == "rel:orders.csv" {
			a = dagfile.TableAddr{Conn: a.Conn, Table: tt.addr[len(a.Conn)+1:]} // an object path
		}
		if got := assetURI(f, a); got != tt.want {
			t.Errorf("assetURI(%s) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}
