package openlineage

import (
	"net"
	"net/url"
	"path"
	"strings"
)

// DatasetName names a table of a connection as the OpenLineage naming
// spec (spec/Naming.md) does: the namespace is the data source
// (scheme://authority) and the name the table within it.
//
//	postgres://host:5432/db      + schema.table → postgres://host:5432, db.schema.table
//	mysql://host:3306/db         + db.table     → mysql://host:3306,    db.table
//	clickhouse://host:9000/db    + db.table     → clickhouse://host:9000, db.table
//	bigquery://project           + dataset.t    → bigquery,             project.dataset.t
//	file:///data                 + orders.csv   → file,                 /data/orders.csv
//	s3://bucket/prefix           + orders.csv   → s3://bucket,          prefix/orders.csv
//	gs://bucket/prefix           + orders.csv   → gs://bucket,          prefix/orders.csv
//	iceberg://?warehouse=W…      + ns.table     → the table's location W/ns.db/table named as a file or s3 path
//
// Ports default to the server's (5432, 3306, 9000 native, 8123 over HTTP);
// user, password and query parameters never appear. rawURL is the
// connection's expanded URL, relative paths already resolved. ok is false
// for a URL it cannot name (no host, unknown scheme).
func DatasetName(rawURL, schema, table string) (namespace, name string, ok bool) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", "", false
	}
	scheme := strings.ToLower(u.Scheme)
	base, variant, _ := strings.Cut(scheme, "+")
	db := strings.Trim(u.Path, "/")
	qualified := func(parts ...string) string {
		var out []string
		for _, p := range parts {
			if p != "" {
				out = append(out, p)
			}
		}
		return strings.Join(out, ".")
	}
	switch base {
	case "postgres", "postgresql":
		if schema == "" {
			schema = "public"
		}
		return hostPort("postgres", u, "5432"), qualified(db, schema, table), u.Host != ""
	case "mysql", "mariadb":
		if schema == "" {
			schema = db
		}
		return hostPort("mysql", u, "3306"), qualified(schema, table), u.Host != ""
	case "clickhouse":
		port := "9000"
		if variant == "http" || variant == "https" {
			port = "8123"
		}
		if schema == "" {
			schema = db
		}
		if schema == "" {
			schema = "default"
		}
		return hostPort("clickhouse", u, port), qualified(schema, table), u.Host != ""
	case "bigquery":
		return "bigquery", qualified(u.Host, schema, table), u.Host != ""
	case "file", "":
		return "file", path.Join("/", u.Path, schema, table), true
	case "s3", "s3a", "gs", "gcs":
		if base == "gcs" {
			base = "gs"
		}
		if base == "s3a" {
			base = "s3"
		}
		return base + "://" + u.Host, strings.TrimPrefix(path.Join(db, schema, table), "/"), u.Host != ""
	case "iceberg":
		w := u.Query().Get("warehouse")
		if w == "" {
			if u.Host == "" {
				return "", "", false
			}
			// a REST catalog that chooses the locations: named by the catalog
			return hostPort("iceberg", u, u.Port()), qualified(schema, table), true
		}
		// the SQL catalog's default location of a table: <warehouse>/<namespace>.db/<table>
		ns := schema
		if ns != "" {
			ns += ".db"
		}
		return DatasetName(w, ns, table)
	}
	return "", "", false
}

// hostPort is scheme://host:port with def as the port when the URL has none.
func hostPort(scheme string, u *url.URL, def string) string {
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = def
	}
	if port == "" {
		return scheme + "://" + host
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}
