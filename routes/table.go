package routes

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Column is one source column: its Arrow type and the source's own type.
type Column struct {
	Name       string
	Type       arrow.DataType // what the source decodes to
	Nullable   bool
	NativeType string // the source's type as its DDL spells it, e.g. "numeric(12,2)"
}

// TableInfo is what Probe learns about a source table.
type TableInfo struct {
	Scheme      string // the source's scheme, e.g. "postgres"
	SourceID    string // identity for state: endpoint without secrets + table
	Ref         TableRef
	Columns     []Column
	PrimaryKey  []string
	RowEstimate int64
	// Empty: the probe read the whole table and found no row (gsheets: a
	// tab with its header only). A replace then keeps the destination
	// without preparing it, as it would after reading nothing: such a
	// source's column types are unknown, and a destination that checks
	// them at Prepare (Iceberg) must not refuse it for that.
	Empty bool
}

// Metadata keys weir puts on Arrow fields.
const (
	MetaNativeType = "weir.native_type" // the source's column type
	MetaScheme     = "weir.scheme"      // the source's scheme (on the schema)
)

// Schema returns the Arrow schema of the table's columns, each field carrying
// its native type in metadata.
func (t *TableInfo) Schema() *arrow.Schema {
	fields := make([]arrow.Field, len(t.Columns))
	for i, c := range t.Columns {
		fields[i] = arrow.Field{
			Name:     c.Name,
			Type:     c.Type,
			Nullable: c.Nullable,
			Metadata: arrow.NewMetadata([]string{MetaNativeType}, []string{c.NativeType}),
		}
	}
	md := arrow.NewMetadata([]string{MetaScheme}, []string{t.Scheme})
	return arrow.NewSchema(fields, &md)
}

// Column returns the named column, if present.
func (t *TableInfo) Column(name string) (Column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// NewRunID returns a short id for one run: 8 lower-case hex characters,
// sortable enough by the timestamp stored beside it.
func NewRunID() string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return hex.EncodeToString([]byte(time.Now().Format("0405")))
	}
	return hex.EncodeToString(b[:])
}
