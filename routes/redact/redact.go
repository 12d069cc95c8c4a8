// Package redact hides the secrets of URLs in any text: the one rule set
// that routes.Redact, dagfile and every adapter's messages use.
//
// What is hidden (replaced by xxxxx):
//   - the password of a URL's user info (scheme://user:PASSWORD@host), also
//     of a URL carried in another's query, plain or percent-encoded
//     (iceberg://?uri=postgres%3A%2F%2Fu%3APW%40h%2Fdb);
//   - the value of a query parameter whose name looks secret (SecretName):
//     names may hold '.', '-' and '_' (s3.secret-access-key=) and may be
//     percent-encoded; so also of a libpq key=value connection string
//     (host=h password=pw, or password='p w').
//
// A value that is exactly one ${VAR} reference is shown as it is: it names
// a secret (dagfile expands it later), it does not hold one. Empty values
// are shown too. Redacting too much is the safe side: a password holding
// '/' or '@' is hidden whole, up to the next '?', '#', blank or quote.
package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// Mask replaces every hidden value.
const Mask = "xxxxx"

// String returns s with every secret in it replaced by Mask.
func String(s string) string {
	return params(userinfo(s, "?# \t\r\n\"'<>`"), param)
}

// URL is String for a text that is one URL (as given, maybe malformed):
// a blank does not end it, so a password holding one is hidden whole.
func URL(s string) string {
	return params(userinfo(s, "?#"), urlParam)
}

// userinfo hides the password after each "://" in s. The user info ends
// at the last '@' before the next of the stops or "://".
func userinfo(s, stops string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+3])
		s = s[i+3:]
		end := strings.IndexAny(s, stops)
		if end < 0 {
			end = len(s)
		}
		if next := strings.Index(s[:end], "://"); next >= 0 {
			end = next
		}
		at := strings.LastIndex(s[:end], "@")
		if at < 0 {
			continue
		}
		user, pass, ok := strings.Cut(s[:at], ":")
		if !ok || pass == "" || isRef(pass) || strings.Contains(user, "/") {
			continue
		}
		b.WriteString(user + ":" + Mask)
		s = s[at:]
	}
}

// param is one name=value of a query string, or of a libpq key=value
// connection string (password=pw dbname=db, which also reaches messages as
// a path): the value ends at '&', '#', '?', a blank or a quote, or is one
// '…' quoted value.
var param = regexp.MustCompile(`([?&]|^|\s)([^=&?#\s"'<>]+)=('(?:[^'\\]|\\.)*'|[^&#?\s"'<>]*)`)

// urlParam is param in a text that is one URL: blanks do not end a value.
var urlParam = regexp.MustCompile(`([?&])([^=&?#]+)=([^&#?]*)`)

// params hides the values of secret-named parameters, and the secrets of
// percent-encoded URLs in other parameters' values.
func params(s string, param *regexp.Regexp) string {
	return param.ReplaceAllStringFunc(s, func(m string) string {
		sub := param.FindStringSubmatch(m)
		name, value := sub[2], sub[3]
		if v := Param(name, value); v != value {
			return sub[1] + name + "=" + v
		}
		if strings.Contains(strings.ToUpper(value), "%3A%2F%2F") {
			if dec, err := url.QueryUnescape(value); err == nil {
				if r := URL(dec); r != dec {
					return sub[1] + name + "=" + url.QueryEscape(r)
				}
			}
		}
		return m
	})
}

// Param returns the value of query parameter name as it may be printed:
// Mask when the name is secret, unless the value is empty or a ${VAR}.
func Param(name, value string) string {
	if value == "" || isRef(value) || !SecretName(name) {
		return value
	}
	return Mask
}

// secretWords make a parameter secret wherever they appear in its name
// (password, passwd, passphrase, sasl.password, s3.secret-access-key,
// client_secret, token, access_token, s3.session-token, credential,
// credentials_json, credentials_file, authorization).
var secretWords = []string{"pass", "secret", "token", "credential", "authorization", "signature"}

// keyNeighbours are the words beside a "key" that make it a key of rows,
// not a secret: primary_key, sort-key, key_column, key.columns, partition_key.
var keyNeighbours = map[string]bool{
	"primary": true, "sort": true, "sorting": true, "partition": true, "order": true,
	"cluster": true, "clustering": true, "shard": true, "sharding": true, "distribution": true,
	"dedup": true, "merge": true, "unique": true, "foreign": true, "join": true, "group": true,
	"column": true, "columns": true, "col": true, "cols": true, "by": true, "field": true,
	"fields": true, "name": true, "names": true,
}

// SecretName reports whether a query parameter's value is a secret. Besides
// secretWords anywhere in the name, "auth" as a word (auth=, http_auth=)
// and any word holding "key" is secret (key=, api_key=, apikey=,
// s3.access-key-id=, private_key=), except "keys" and a "key" beside a
// keyNeighbours word (primary_key=, key_column=): those name columns.
func SecretName(name string) bool {
	if n, err := url.QueryUnescape(name); err == nil {
		name = n
	}
	name = strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	words := strings.FieldsFunc(name, func(r rune) bool { return r == '.' || r == '-' || r == '_' })
	for i, w := range words {
		switch {
		case w == "auth":
			return true
		case w == "key":
			if !(i > 0 && keyNeighbours[words[i-1]]) && !(i+1 < len(words) && keyNeighbours[words[i+1]]) {
				return true
			}
		case w != "keys" && strings.Contains(w, "key"):
			return true
		}
	}
	return false
}

// isRef reports whether s is exactly one ${VAR} reference.
func isRef(s string) bool {
	return strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}") && strings.Count(s, "${") == 1 && !strings.ContainsAny(s[2:len(s)-1], "${}")
}
