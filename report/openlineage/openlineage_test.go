package openlineage

import (
	"testing"
)

// TestDatasetName: the OpenLineage naming spec for each kind of weir
// connection; credentials and query parameters never appear.
func TestDatasetName(t *testing.T) {
	tests := []struct {
		url, schema, table string
		ns, name           string
		ok                 bool
	}{
		{"postgres://u:secret@db.example:5433/shop?sslmode=disable", "public", "orders", "postgres://db.example:5433", "shop.public.orders", true},
		{"postgresql://db.example/shop", "", "orders", "postgres://db.example:5432", "shop.public.orders", true},
		{"postgres://u:p@[::1]/shop", "s", "t", "postgres://[::1]:5432", "shop.s.t", true},
		{"mysql://root:pw@127.0.0.1:13306/app", "app", "orders", "mysql://127.0.0.1:13306", "app.orders", true},
		{"mysql://h/app", "", "orders", "mysql://h:3306", "app.orders", true},
		{"mariadb://h/app", "other", "t", "mysql://h:3306", "other.t", true},
		{"clickhouse://default:pw@ch:19000/analytics", "analytics", "events", "clickhouse://ch:19000", "analytics.events", true},
		{"clickhouse+http://ch/analytics", "", "events", "clickhouse://ch:8123", "analytics.events", true},
		{"clickhouse://ch", "", "events", "clickhouse://ch:9000", "default.events", true},
		{"bigquery://my-project?credentials_json=xx", "ds", "t", "bigquery", "my-project.ds.t", true},
		{"file:///srv/data", "", "orders.csv", "file", "/srv/data/orders.csv", true},
		{"/srv/data", "", "in/orders.csv", "file", "/srv/data/in/orders.csv", true},
		{"s3://key:secret@bucket/raw?region=eu-west-1", "", "orders.parquet", "s3://bucket", "raw/orders.parquet", true},
		{"s3://bucket", "", "orders.parquet", "s3://bucket", "orders.parquet", true},
		{"gcs://bucket/p", "", "o.csv", "gs://bucket", "p/o.csv", true},
		{"iceberg://?catalog=sql&uri=sqlite:///srv/lake/catalog.db&warehouse=file:///srv/lake", "silver", "orders", "file", "/srv/lake/silver.db/orders", true},
		{"iceberg://?catalog=sql&uri=postgres://u:pw@pg/cat&warehouse=s3://k:s@lake-bucket/wh", "gold", "revenue", "s3://lake-bucket", "wh/gold.db/revenue", true},
		{"iceberg+rest://catalog:8181/?tls=true", "silver", "orders", "iceberg://catalog:8181", "silver.orders", true},
		{"postgres:///shop", "s", "t", "", "", false},
		{"kafka://broker:9092", "", "topic", "", "", false},
		{"iceberg://?catalog=sql", "s", "t", "", "", false},
	}
	for _, tt := range tests {
		ns, name, ok := DatasetName(tt.url, tt.schema, tt.table)
		if ok != tt.ok || ok && (ns != tt.ns || name != tt.name) {
			t.Errorf("DatasetName(%s, %s, %s) = %q %q %v, want %q %q %v", tt.url, tt.schema, tt.table, ns, name, ok, tt.ns, tt.name, tt.ok)
		}
	}
}

func TestParentFromEnv(t *testing.T) {
	const id = "01890f9e-8d4e-7a6b-9c3d-2e1f0a9b8c7d"
	tests := []struct {
		env  map[string]string
		want Parent
		ok   bool
	}{
		{map[string]string{"OPENLINEAGE_PARENT_ID": "airflow/dag.task/" + id}, Parent{"airflow", "dag.task", id}, true},
		{map[string]string{"OPENLINEAGE_PARENT_ID": "ns/a/b/" + id}, Parent{"ns", "a/b", id}, true},
		{map[string]string{"OPENLINEAGE_PARENT_JOB_NAMESPACE": "dagster", "OPENLINEAGE_PARENT_JOB_NAME": "job", "OPENLINEAGE_PARENT_RUN_ID": id}, Parent{"dagster", "job", id}, true},
		{map[string]string{"OPENLINEAGE_PARENT_ID": "airflow/dag.task/not-a-uuid"}, Parent{}, false},
		{map[string]string{"OPENLINEAGE_PARENT_ID": id}, Parent{}, false},
		{map[string]string{}, Parent{}, false},
	}
	for _, tt := range tests {
		got, ok := ParentFromEnv(func(k string) string { return tt.env[k] })
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParentFromEnv(%v) = %+v %v, want %+v %v", tt.env, got, ok, tt.want, tt.ok)
		}
	}
}
