package generate

import (
	"regexp"
	"strconv"
	"strings"
	"text/template"

	"gopkg.in/yaml.v3"
)

// funcs are the template functions.
var funcs = template.FuncMap{
	"py":     pyString,
	"pylist": pyList,
	"yq":     yamlScalar,
	"yflow":  yamlFlow,
	"join":   strings.Join,
}

// pyString returns s as a Python string literal. Go's quoting uses only
// escapes Python shares (\n, \t, \", \\, \xNN, \uNNNN, \UNNNNNNNN).
func pyString(s string) string { return strconv.Quote(s) }

// pyList returns a Python list of string literals.
func pyList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = pyString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// yamlScalar returns s as a YAML scalar: plain when YAML reads it back as
// the same string, quoted otherwise.
func yamlScalar(s string) string {
	if strings.ContainsAny(s, "\n\r") {
		return strconv.Quote(s)
	}
	b, err := yaml.Marshal(s)
	if err != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(string(b), "\n")
}

// yamlFlow returns a YAML flow sequence of scalars.
func yamlFlow(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = yamlScalar(s)
		if strings.ContainsAny(q[i], ",[]{}") && !strings.HasPrefix(q[i], "'") && !strings.HasPrefix(q[i], `"`) {
			q[i] = strconv.Quote(s)
		}
	}
	return "[" + strings.Join(q, ", ") + "]"
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellJoin quotes and joins an argv for a shell.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}
