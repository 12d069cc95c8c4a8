package dagfile

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/scheme"
)

// TableAddr addresses a table in a connection: conn:schema.table, parsed
// by routes.ParseTableRef (double quotes keep dots: lake:"my.schema".t).
// Objects of file and object-store connections have no schema: Table is
// the object path (orders.csv).
type TableAddr struct {
	Conn   string
	Schema string
	Table  string
}

// ParseTableAddr parses "conn:schema.table" (or "conn:table").
func ParseTableAddr(s string) (TableAddr, error) {
	conn, name, ok := strings.Cut(s, ":")
	if !ok || !nameRE.MatchString(conn) || strings.Contains(name, ":") {
		return TableAddr{}, fmt.Errorf("bad table address %q: write connection:schema.table, e.g. lake:silver.orders", s)
	}
	if err := checkTableName(name); err != nil {
		return TableAddr{}, fmt.Errorf("bad table address %q: %w", s, err)
	}
	schema, table, _ := cutSchema(name)
	return TableAddr{Conn: conn, Schema: schema, Table: table}, nil
}

// checkTableName checks a schema.table name by the rules every table name
// of weir follows (routes.ParseTableRef: no empty part, quotes balanced
// and around whole parts, at most schema.table; a file path is whole).
func checkTableName(name string) error {
	if name == "" {
		return errors.New("the table name is empty")
	}
	if _, err := routes.ParseTableRef(name); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), routes.ErrBadInput.Error()+": "))
	}
	return nil
}

// cutSchema splits schema.table as routes.ParseTableRef does; ok is false
// when there is no schema. A name it cannot parse was refused at decode
// time; here it stays whole.
func cutSchema(name string) (schema, table string, ok bool) {
	t, err := routes.ParseTableRef(name)
	if err != nil {
		return "", name, false
	}
	return t.Schema, t.Name, t.Schema != ""
}

// objectAddr addresses an object of a file or object-store connection.
func objectAddr(conn, name string) TableAddr { return TableAddr{Conn: conn, Table: name} }

// Name returns schema.table (or table when there is no schema).
func (a TableAddr) Name() string {
	if a.Schema == "" {
		return a.Table
	}
	return a.Schema + "." + a.Table
}

// String returns conn:schema.table.
func (a TableAddr) String() string { return a.Conn + ":" + a.Name() }

// IsZero reports whether a is the zero address.
func (a TableAddr) IsZero() bool { return a == TableAddr{} }

// Parts returns the non-empty parts [conn, schema, table], e.g. for an asset key.
func (a TableAddr) Parts() []string {
	if a.Schema == "" {
		return []string{a.Conn, a.Table}
	}
	return []string{a.Conn, a.Schema, a.Table}
}

// key is the case-insensitive identity used to match readers with writers.
func (a TableAddr) key() string { return strings.ToLower(a.String()) }

// objectSchemes are the schemes whose "tables" are object paths.
var objectSchemes = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range scheme.ObjectPaths {
		m[s] = true
	}
	return m
}()

// baseName is an object path's file name without its extension (data/orders.csv → orders).
func baseName(object string) string {
	b := path.Base(object)
	if i := strings.IndexByte(b, '.'); i > 0 {
		b = b[:i]
	}
	return b
}
