package redact_test

import (
	"strings"
	"testing"

	"github.com/weirhq/weir/routes/redact"
	"github.com/weirhq/weir/routes/redact/redacttest"
)

func TestDocSecrets(t *testing.T) {
	for _, u := range redacttest.DocSecrets {
		for _, text := range []string{u, "open " + u + ": connection refused", `parse "` + u + `": bad`} {
			if got := redact.String(text); strings.Contains(got, "S3CRET") {
				t.Errorf("String(%q) = %q: the secret shows", text, got)
			}
		}
	}
}

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://u:secret@h:5432/db", "postgres://u:xxxxx@h:5432/db"},
		{"connect postgres://u:secret@h/db: refused", "connect postgres://u:xxxxx@h/db: refused"},
		{"mysql://root@h:3306/test", "mysql://root@h:3306/test"},
		{"a s3://k:se%2Fcret@b/p and clickhouse://d:pw@h:9000/x", "a s3://k:xxxxx@b/p and clickhouse://d:xxxxx@h:9000/x"},
		{"postgres://u:se/cret@h/db", "postgres://u:xxxxx@h/db"},
		{"postgres://u:sec ret@h/db", "postgres://u:sec ret@h/db"}, // not a URL: a blank ends it
		{"s3://b/p?endpoint=http://h&secret_access_key=v&region=x", "s3://b/p?endpoint=http://h&secret_access_key=xxxxx&region=x"},
		{"bigquery://p/d?credentials_json=v", "bigquery://p/d?credentials_json=xxxxx"},
		{"iceberg://?catalog=sql&uri=postgres%3A%2F%2Fu%3Asecret%40h%2Fdb", "iceberg://?catalog=sql&uri=postgres%3A%2F%2Fu%3Axxxxx%40h%2Fdb"},
		{"iceberg://?uri=sqlite:///c.db&warehouse=s3://AKID:secret@lake/wh&region=x", "iceberg://?uri=sqlite:///c.db&warehouse=s3://AKID:xxxxx@lake/wh&region=x"},
		{"iceberg://?uri=postgres://u:pw@h/db&warehouse=s3://k:s@lake/wh", "iceberg://?uri=postgres://u:xxxxx@h/db&warehouse=s3://k:xxxxx@lake/wh"},
		{"iceberg+rest://h/?credential=id:sec&s3.secret-access-key=k&tls=true", "iceberg+rest://h/?credential=xxxxx&s3.secret-access-key=xxxxx&tls=true"},
		// ${VAR} references name a secret, they do not hold one (dagfile).
		{"postgres://u:${PG_PASS}@h/db", "postgres://u:${PG_PASS}@h/db"},
		{"s3://b/p?access_token=${TOKEN}", "s3://b/p?access_token=${TOKEN}"},
		{"s3://b/p?access_token=${TOKEN}x", "s3://b/p?access_token=xxxxx"},
		{"${APP_PG_URL}", "${APP_PG_URL}"},
		{"postgres://u@h/db", "postgres://u@h/db"},
		{"./data/file.csv", "./data/file.csv"},
		{"s3://b/p?token=", "s3://b/p?token="},
		// Not secrets: row keys, hosts with ports, ordinary parameters.
		{"clickhouse://h:9000/db?order_by=id&primary_key=id&key_columns=a,b&keys=id", "clickhouse://h:9000/db?order_by=id&primary_key=id&key_columns=a,b&keys=id"},
		{"postgres://h:5432/db?sslmode=disable&application_name=weir", "postgres://h:5432/db?sslmode=disable&application_name=weir"},
		{"kafka://b1:9092,b2:9092/topic?group=g", "kafka://b1:9092,b2:9092/topic?group=g"},
		// libpq key=value connection strings, also inside a message or a path.
		{"host=h port=5432 password=pw dbname=db", "host=h port=5432 password=xxxxx dbname=db"},
		{"password=pw host=h", "password=xxxxx host=h"},
		{"open file:///tmp/host=h password=pw dbname=db/t: not found", "open file:///tmp/host=h password=xxxxx dbname=db/t: not found"},
		{"host=h password='p w\\' x' sslpassword=q", "host=h password=xxxxx sslpassword=xxxxx"},
		{"host=h user=u dbname=db sslmode=disable", "host=h user=u dbname=db sslmode=disable"},
	}
	for _, tc := range tests {
		if got := redact.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A text that is one URL hides a password with blanks in it whole.
func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:p w@h/db":                           "postgres://u:xxxxx@h/db",
		"postgres://u:p\tw@h/db?x=1":                      "postgres://u:xxxxx@h/db?x=1",
		"postgres://u@h/db?password=a b":                  "postgres://u@h/db?password=xxxxx",
		"iceberg://?uri=postgres://h/db?password=a b&x=1": "iceberg://?uri=postgres://h/db?password=xxxxx&x=1",
	} {
		if got := redact.URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSecretName(t *testing.T) {
	secret := []string{"password", "PassWord", "passwd", "passphrase", "sslpassword", "sasl.password", "secret",
		"client_secret", "s3.secret-access-key", "token", "s3.session-token", "access_token", "credential",
		"credentials_json", "credentials_file", "authorization", "auth", "http_auth", "key", "api_key", "apikey",
		"api-key", "s3.access-key-id", "private_key", "sas_key", "accesskey", "s3%2Esecret-access-key"}
	plain := []string{"primary_key", "key_column", "key_columns", "sort-key", "partition.key", "keys", "order_by",
		"region", "endpoint", "warehouse", "uri", "group", "subscribe", "catalog", "key_name", "oauth2-server-uri"}
	for _, n := range secret {
		if !redact.SecretName(n) {
			t.Errorf("SecretName(%q) = false, want true", n)
		}
	}
	for _, n := range plain {
		if redact.SecretName(n) {
			t.Errorf("SecretName(%q) = true, want false", n)
		}
	}
}
