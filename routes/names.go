package routes

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
)

// Every object weir creates beside a destination table is named here, from
// the table's name, by SideName: staging and replaced tables, indexes,
// changelog views and baselines. One function, so the names fit the
// server's identifier limit the same way everywhere and never collide with
// the table they derive from.

// Limit is a server's identifier limit: Fits reports whether a name fits.
type Limit func(name string) bool

// Bytes is a limit of n bytes (PostgreSQL: 63).
func Bytes(n int) Limit { return func(s string) bool { return len(s) <= n } }

// Runes is a limit of n characters (MySQL/MariaDB: 64).
func Runes(n int) Limit { return func(s string) bool { return utf8.RuneCountInString(s) <= n } }

// SideName is prefix+base+suffix when that fits the limit. Otherwise base is
// cut at a rune boundary and followed by "_" and 8 hex digits of its SHA-1,
// so two long names that share their first bytes still differ, the result
// is valid UTF-8, and it never equals base itself (a name the server would
// truncate to base's would be base). prefix and suffix are kept whole.
func SideName(prefix, base, suffix string, fits Limit) string {
	name := prefix + base + suffix
	if fits(name) {
		return name
	}
	h := sha1.Sum([]byte(base))
	tag := "_" + hex.EncodeToString(h[:4])
	cut := base
	for cut != "" && !fits(prefix+cut+tag+suffix) {
		_, size := utf8.DecodeLastRuneInString(cut)
		cut = cut[:len(cut)-size]
	}
	return prefix + cut + tag + suffix
}

// Unlimited fits any name (ClickHouse, Iceberg, files).
func Unlimited(string) bool { return true }

// IdentLimiter is a Destination whose server limits identifiers.
type IdentLimiter interface {
	IdentLimit() Limit
}

// IdentLimitOf is dst's identifier limit; Unlimited when it has none.
func IdentLimitOf(dst any) Limit {
	if l, ok := As[IdentLimiter](dst); ok {
		return l.IdentLimit()
	}
	return Unlimited
}

// Occupied is the bad input (exit 2) of a user object standing where weir
// would create one of its own: weir neither drops nor reuses it.
func Occupied(object TableRef, what string) error {
	return BadInput("%s already exists and weir did not create it (weir would use that name for %s): rename or drop it, or name another destination table", object, what)
}

// ColumnRule is how a destination's server names columns: the longest
// name it holds as it is (PostgreSQL truncates a longer one with only a
// notice, so two long names may become one and a merge key another
// column), and Fold, when two different names can be one column there:
// two names equal after Fold are one (MySQL and BigQuery compare names
// without case; Iceberg writes a column into its data files under the
// name escaped for Avro, a.b as a_x2Eb, so a.b and a_x2Eb are one).
type ColumnRule struct {
	Server string              // "PostgreSQL", for the message
	Fits   Limit               // a name the server holds unchanged
	Limit  string              // what Fits allows, for the message: "63 bytes"
	Fold   func(string) string // nil: names are compared exactly
	Folds  string              // what Fold does, for the message: "compares column names without case"
	// Fields: the rule holds for the field names of a struct column too
	// (a struct's or a list's element's, at any depth), each struct's
	// fields among themselves (Iceberg writes them as it writes columns).
	Fields bool
}

// CheckColumnNames refuses, as bad input naming the table and column, a
// table whose columns the destination cannot hold under their own
// names. Destinations call it in Prepare, before they create anything.
func CheckColumnNames(info *TableInfo, r ColumnRule) error {
	names := make([]string, len(info.Columns))
	for i, c := range info.Columns {
		names[i] = c.Name
	}
	if name, problem, hint := r.check(names, "column"); problem != "" {
		return &ProbeError{Table: info.Ref.String(), Column: name, Problem: problem, Hint: hint}
	}
	if !r.Fields {
		return nil
	}
	for _, c := range info.Columns {
		var err error
		structFields(c.Type, func(fields []string) bool {
			if _, problem, hint := r.check(fields, "field"); problem != "" {
				err = &ProbeError{Table: info.Ref.String(), Column: c.Name, Problem: problem + " (fields of this column)", Hint: hint}
			}
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// check holds names (a table's columns, or one struct's fields: what) to
// r, and returns the first name it refuses with the problem and what to
// do; problem is "" when it refuses none.
func (r ColumnRule) check(names []string, what string) (name, problem, hint string) {
	seen := map[string]string{}
	for _, n := range names {
		if n == "" || !r.Fits(n) {
			return n, fmt.Sprintf("%s %s names are 1 to %s; %q would not land as named", r.Server, what, r.Limit, n),
				"rename the " + what + " at the source, or select it under a shorter name in a model"
		}
		if r.Fold == nil {
			continue
		}
		k := r.Fold(n)
		if prev, dup := seen[k]; dup {
			return n, fmt.Sprintf("%s %s, so %q and %q would be one %s (both %q)", r.Server, r.Folds, prev, n, what, k),
				"rename one of them at the source, or select it under another name in a model"
		}
		seen[k] = n
	}
	return "", "", ""
}

// structFields calls f with the field names of each struct within typ (a
// struct column, its nested structs, a list's element struct), until f
// returns false.
func structFields(typ arrow.DataType, f func(names []string) bool) bool {
	switch t := typ.(type) {
	case arrow.ExtensionType:
		return structFields(t.StorageType(), f)
	case *arrow.StructType:
		names := make([]string, t.NumFields())
		for i, fl := range t.Fields() {
			names[i] = fl.Name
		}
		if !f(names) {
			return false
		}
		for _, fl := range t.Fields() {
			if !structFields(fl.Type, f) {
				return false
			}
		}
	case arrow.ListLikeType:
		if t.ID() != arrow.MAP {
			return structFields(t.ElemField().Type, f)
		}
	}
	return true
}
