// Package redacttest holds the secret-bearing URLs of docs/, for the tests
// that check every place weir prints a URL or an error hides them.
package redacttest

// Marker is the secret every URL of DocSecrets holds.
const Marker = "S3CRET"

// DocSecrets are the secret-bearing URL parts named in docs/, collected with
//
//	grep -rnoiE '[?&][A-Za-z0-9_.%-]+=' docs/ README.md
//	grep -rnoiE '`[A-Za-z0-9_.-]*(key|secret|token|pass|credential|sasl|auth|header)[A-Za-z0-9_.-]*=?`' docs/
//	grep -rn ':[A-Za-z]*@\|KEY:SECRET' docs/
//
// (routes-iceberg.md: credential=, token=, s3.access-key-id,
// s3.secret-access-key, the s3.* parameters passed on (s3.session-token),
// s3://KEY:SECRET@ warehouses, uri= catalog databases; bigquery.md:
// credentials_file=; objstore.md: s3://AKIA…:secret@; dagfile.md: password,
// secret, token, key, credential), plus the shapes of credentials other
// drivers take in a URL (sslpassword=, sasl.password=, access_token=,
// api_key=, authorization=). Each URL holds the secret "S3CRET" (or
// "S3CRET" percent-encoded inside a nested URL); no rendering may show it.
// Every host is 127.0.0.1:1 (a closed port): opening one fails at once,
// without leaving the machine (BigQuery retries a refused connection
// until its deadline: its URL carries a bad swap= so that its factory
// fails first). cmd/weir runs the list through factory
// errors, the transfer report, weir status and the printed errors.
var DocSecrets = []string{
	"iceberg+rest://127.0.0.1:1/?warehouse=wh&credential=client:S3CRET",
	"iceberg+rest://127.0.0.1:1/?warehouse=wh&token=S3CRET",
	"iceberg://?catalog=sql&uri=sqlite:///nonexistent-weir-test/c.db&warehouse=s3://lake/wh&endpoint=http://127.0.0.1:1&s3.access-key-id=S3CRET",
	"iceberg://?catalog=sql&uri=sqlite:///nonexistent-weir-test/c.db&warehouse=s3://lake/wh&endpoint=http://127.0.0.1:1&s3.secret-access-key=S3CRET",
	"iceberg://?catalog=sql&uri=sqlite:///nonexistent-weir-test/c.db&warehouse=s3://lake/wh&endpoint=http://127.0.0.1:1&s3.session-token=S3CRET",
	"iceberg://?catalog=sql&uri=sqlite:///nonexistent-weir-test/c.db&warehouse=s3://AKID:S3CRET@lake/wh&endpoint=http://127.0.0.1:1",
	"iceberg://?catalog=sql&uri=sqlite:///nonexistent-weir-test/c.db&warehouse=s3%3A%2F%2FAKID%3AS3CRET%40lake%2Fwh&endpoint=http://127.0.0.1:1",
	"iceberg://?catalog=sql&uri=postgres://u:S3CRET@127.0.0.1:1/db&warehouse=file:///lake",
	"iceberg://?catalog=sql&uri=postgres%3A%2F%2Fu%3AS3CRET%40127.0.0.1%3A1%2Fdb&warehouse=file:///lake",
	"iceberg://?catalog=sql&uri=postgres%3A%2F%2F127.0.0.1%3A1%2Fdb%3Fpassword%3DS3CRET&warehouse=file:///lake",
	"iceberg://?catalog=sql&uri=sqlite:///nonexistent-weir-test/c.db&warehouse=file:///lake&s3%2Esecret-access-key=S3CRET",
	"bigquery://p/d?endpoint=http://127.0.0.1:1&credentials_file=/secrets/S3CRET.json&swap=bad",
	"bigquery://p/d?endpoint=http://127.0.0.1:1&credentials_json=S3CRET",
	"s3://AKIA:S3CRET@bucket/prefix?region=us-east-1&endpoint=http://127.0.0.1:1",
	"s3://bucket/prefix?endpoint=http://127.0.0.1:1&secret_access_key=S3CRET",
	"gcs://bucket/prefix?endpoint=http://127.0.0.1:1&credentials_file=/S3CRET.json",
	"gsheets://1AbC?endpoint=http://127.0.0.1:1&credentials=/secrets/S3CRET.json",
	"gsheets://1AbC?endpoint=http://127.0.0.1:1&token=S3CRET",
	"postgres://u:S3CRET@127.0.0.1:1/db?sslmode=disable",
	"postgres://u@127.0.0.1:1/db?password=S3CRET",
	"postgres://u@127.0.0.1:1/db?sslpassword=S3CRET",
	"mysql://root:S3CRET@127.0.0.1:1/db",
	"clickhouse://default:S3CRET@127.0.0.1:1/db",
	"clickhouse+http://default:S3CRET@127.0.0.1:1/db",
	"kafka://127.0.0.1:1/topic?group=g&sasl.password=S3CRET",
	"kafka://127.0.0.1:1/topic?group=g&sasl_password=S3CRET",
	"sse+https://127.0.0.1:1/feed?access_token=S3CRET",
	"wss://127.0.0.1:1/feed?api_key=S3CRET&subscribe=x",
	"wss://127.0.0.1:1/feed?authorization=Bearer%20S3CRET",
	"sse://127.0.0.1:1/feed?key=S3CRET",
	"sse://127.0.0.1:1/feed?secret=S3CRET",
	"pubsub://p/sub?passwd=S3CRET",
}
