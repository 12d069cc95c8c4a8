package routes

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/weirhq/weir/routes/redact"
)

// URL is a parsed endpoint address. Its String never shows the password.
type URL struct {
	u   *url.URL
	raw string
}

// ParseURL parses an endpoint URL. A bare path (no scheme) is a file:// URL.
// Errors never repeat the password.
func ParseURL(raw string) (*URL, error) {
	if raw == "" {
		return nil, BadInput("empty URL")
	}
	if !strings.Contains(raw, "://") && !strings.HasPrefix(raw, "file:") {
		if key, ok := conninfoKey(raw); ok {
			return nil, BadInput("%s=… is a libpq connection string, not a URL weir reads: write it as postgres://user@host:port/dbname?sslmode=disable (for a directory of that name: ./%s=…)", key, key)
		}
		abs, err := filepath.Abs(raw)
		if err != nil {
			return nil, BadInput("path %q: %v", raw, err)
		}
		raw = "file://" + abs
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, BadInput("cannot parse URL %s (check its syntax; special characters in the password must be percent-encoded)", redact.URL(raw))
	}
	if u.Scheme == "" {
		return nil, BadInput("URL %s has no scheme (like postgres://, mysql://, file://)", redact.URL(raw))
	}
	u.Scheme = strings.ToLower(u.Scheme)
	return &URL{u: u, raw: raw}, nil
}

// conninfoKeys are libpq's connection keywords: a bare argument that
// starts with one (host=db dbname=shop) is a libpq string, not a path — as
// a path it would become a directory named after the credentials.
var conninfoKeys = map[string]bool{
	"host": true, "hostaddr": true, "port": true, "dbname": true, "user": true, "password": true,
	"passfile": true, "sslmode": true, "service": true, "connect_timeout": true, "application_name": true, "options": true,
}

func conninfoKey(s string) (string, bool) {
	key, _, ok := strings.Cut(strings.TrimSpace(s), "=")
	return key, ok && conninfoKeys[strings.ToLower(key)]
}

// Scheme is the lower-case scheme, e.g. "postgres" or "clickhouse+http".
func (u *URL) Scheme() string { return u.u.Scheme }

// URL returns a copy of the parsed URL, with the password, for drivers.
func (u *URL) URL() *url.URL { c := *u.u; return &c }

// Raw returns the URL as given, with the password, for drivers only.
func (u *URL) Raw() string { return u.raw }

// String returns the URL with every password (also of URLs nested in its
// query) replaced by xxxxx.
func (u *URL) String() string { return Redact(u.raw) }

// Password returns the password, if the URL has one.
func (u *URL) Password() string {
	p, _ := u.u.User.Password()
	return p
}

// Identity names the endpoint without user or password (scheme://host/path),
// used in state keys so rotating a password does not reset a watermark.
func (u *URL) Identity() string {
	c := url.URL{Scheme: u.u.Scheme, Host: u.u.Host, Path: u.u.Path}
	return c.String()
}

// Redact replaces every secret in s — URL passwords, also of URLs nested
// in a query, and the values of secret-looking query parameters — with
// xxxxx (the rules: package redact). Use it on any message that may carry
// a URL.
func Redact(s string) string { return redact.String(s) }

// Scrub removes the given secrets from msg; use it on driver errors that may
// echo a password verbatim.
func Scrub(msg string, secrets ...string) string {
	msg = Redact(msg)
	for _, s := range secrets {
		if len(s) >= 3 {
			msg = strings.ReplaceAll(msg, s, redact.Mask)
		}
	}
	return msg
}

// TableRef names a table: schema (or database, for MySQL) and name.
type TableRef struct {
	Schema string
	Name   string
}

// ParseTableRef parses "schema.table" or "table". Double quotes keep dots:
// "my.schema"."my.table". A file path — with a slash, or ending in a data
// file extension like orders.csv.gz or orders.parquet — is kept whole as
// the name, for object-store and file sources.
func ParseTableRef(s string) (TableRef, error) {
	if isFilePath(s) {
		return TableRef{Name: s}, nil
	}
	parts, err := splitIdent(s)
	if err != nil {
		return TableRef{}, err
	}
	switch len(parts) {
	case 1:
		return TableRef{Name: parts[0]}, nil
	case 2:
		return TableRef{Schema: parts[0], Name: parts[1]}, nil
	}
	return TableRef{}, BadInput("table %q: %d name parts, want schema.table or table (quote a name that holds a dot)", s, len(parts))
}

// fileExts are the endings that make a table name a file path.
var fileExts = []string{".parquet", ".csv", ".gz", ".zst", ".json", ".jsonl", ".ndjson", ".arrow", ".avro", ".orc"}

func isFilePath(s string) bool {
	if s == "" || strings.Contains(s, `"`) {
		return false
	}
	if strings.Contains(s, "/") {
		return true
	}
	lower := strings.ToLower(s)
	for _, ext := range fileExts {
		if strings.HasSuffix(lower, ext) && len(s) > len(ext) {
			return true
		}
	}
	return false
}

// splitIdent splits a dotted name into its parts. A part is either bare
// (no dot, quote or blank) or wholly double-quoted ("" is a quote inside);
// an empty part, a quote inside a bare part, text after a closing quote or
// an unclosed quote is malformed.
func splitIdent(s string) ([]string, error) {
	var parts []string
	for i := 0; ; i++ {
		part, next, err := identPart(s, i)
		if err != nil {
			return nil, BadInput("table %q: %s", s, err)
		}
		parts = append(parts, part)
		if next == len(s) {
			return parts, nil
		}
		if s[next] != '.' {
			return nil, BadInput("table %q: text after a closing quote (quote the whole name part)", s)
		}
		i = next
	}
}

// identPart reads one name part of s starting at i; next is where it ends.
func identPart(s string, i int) (part string, next int, err error) {
	var b strings.Builder
	if i < len(s) && s[i] == '"' {
		for i++; i < len(s); i++ {
			if s[i] != '"' {
				b.WriteByte(s[i])
				continue
			}
			if i+1 < len(s) && s[i+1] == '"' {
				b.WriteByte('"')
				i++
				continue
			}
			if b.Len() == 0 {
				return "", 0, errors.New("empty quoted name")
			}
			return b.String(), i + 1, nil
		}
		return "", 0, errors.New("unclosed quote")
	}
	for ; i < len(s) && s[i] != '.'; i++ {
		switch c := s[i]; {
		case c == '"':
			return "", 0, errors.New("a quote inside a name (quote the whole name part)")
		case c <= ' ' || c == 0x7f:
			return "", 0, errors.New("a blank or control character in an unquoted name (quote the name part)")
		}
		b.WriteByte(s[i])
	}
	if b.Len() == 0 {
		return "", 0, errors.New("empty name part")
	}
	return b.String(), i, nil
}

// RootSchema is the source schema that names the top of a file-like
// source's path (`--schema .`: every table under the URL's folder).
const RootSchema = "."

// ParseSourceSchema parses a source's --schema: ParseSchema's rules, and
// RootSchema.
func ParseSourceSchema(s string) (string, error) {
	if s == RootSchema {
		return s, nil
	}
	return ParseSchema(s)
}

// ParseSchema parses a schema name (--schema, --dest-schema) by the rules
// of ParseTableRef: one name part, quotes keep dots; a path is kept whole.
func ParseSchema(s string) (string, error) {
	t, err := ParseTableRef(s)
	if err != nil {
		return "", err
	}
	if t.Schema != "" {
		return "", BadInput("schema %q: want one name (quote a name that holds a dot)", s)
	}
	return t.Name, nil
}

// String renders schema.table (or table), unquoted.
func (t TableRef) String() string {
	if t.Schema == "" {
		return t.Name
	}
	return fmt.Sprintf("%s.%s", t.Schema, t.Name)
}
