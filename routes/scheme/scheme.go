// Package scheme names the URL schemes whose role must be known without
// opening them: dagfile validates a dagfile (weir lint, weir generate)
// with no adapter linked in, so it cannot ask the registries filled by the
// adapters' init functions. The adapters use the same lists, so the two
// cannot drift.
package scheme

// Streams are the schemes of stream sources (routes/stream.Open opens
// each one).
var Streams = []string{"sse", "sse+http", "sse+https", "ws", "wss", "kafka", "pubsub", "sqs"}

// URLDatabase are the schemes whose URL path names the database a table is
// written in (the schema part of schema.table), each with the database a
// URL without one means ("": none; the table must be named database.table
// or the run given --dest-schema). routes.DestRef reads it.
var URLDatabase = map[string]string{
	"mysql": "", "mariadb": "",
	"clickhouse": "default", "clickhouse+http": "default", "clickhouse+https": "default",
}

// SourceOnly are the schemes of table sources that take no writes: a
// dagfile that names one as a transfer's to: is refused by weir lint.
var SourceOnly = []string{"github", "github+api", "gsheets"}

// ObjectPaths are the schemes whose table names are object paths
// (data/orders.csv), loaded under their file's stem (orders).
var ObjectPaths = []string{"file", "s3", "gcs", "gs", "github"}

// ClaimStores are the schemes of claim stores (package claims; claims.Open
// opens each one), and ClaimStoresHint spells them for messages.
var ClaimStores = []string{"postgres", "postgresql", "etcd", "etcd+https", "sqlite"}

const ClaimStoresHint = "postgres://…, etcd[+https]://host:port[,host:port…] or sqlite:///path"
