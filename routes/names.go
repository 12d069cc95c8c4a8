package routes

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"unicode/utf8"
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
// column), and Fold, when it compares names without case (MySQL,
// BigQuery): two names equal after Fold are one column there.
type ColumnRule struct {
	Server string              // "PostgreSQL", for the message
	Fits   Limit               // a name the server holds unchanged
	Limit  string              // what Fits allows, for the message: "63 bytes"
	Fold   func(string) string // nil: names are compared exactly
}

// CheckColumnNames refuses, as bad input naming the table and column, a
// table whose columns the destination cannot hold under their own
// names. Destinations call it in Prepare, before they create anything.
func CheckColumnNames(info *TableInfo, r ColumnRule) error {
	seen := map[string]string{}
	for _, c := range info.Columns {
		if c.Name == "" || !r.Fits(c.Name) {
			return &ProbeError{Table: info.Ref.String(), Column: c.Name,
				Problem: fmt.Sprintf("%s column names are 1 to %s; this one would not land as named", r.Server, r.Limit),
				Hint:    "rename the column at the source, or select it under a shorter name in a model"}
		}
		if r.Fold == nil {
			continue
		}
		k := r.Fold(c.Name)
		if prev, dup := seen[k]; dup {
			return &ProbeError{Table: info.Ref.String(), Column: c.Name,
				Problem: fmt.Sprintf("%s compares column names without case, so %q and %q would be one column", r.Server, prev, c.Name),
				Hint:    "rename one of them at the source, or select it under another name in a model"}
		}
		seen[k] = c.Name
	}
	return nil
}
