package dagfile

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/weirhq/weir/routes/redact"
)

// Getenv looks up an environment variable; os.LookupEnv is one.
type Getenv func(name string) (string, bool)

// Connection is a named URL from the connections section. Raw is the value as
// written, with ${VAR} references unexpanded: generated code uses Raw (or only
// the name), never the expanded value. The expanded value is returned by URL
// alone and is never printed by String, GoString or any error.
type Connection struct {
	Name string
	Raw  string   // as written, e.g. ${APP_PG_URL} or postgres://u:${PG_PASS}@host/db
	Vars []string // the variables Raw references, sorted, unique
	// AirflowConn is an Airflow connection id (airflow_conn:): the generated
	// Airflow task puts its URI into the one variable Raw is, at run time.
	AirflowConn string
	Line        int // position of the connection's key
	Col         int
	url         *string // expanded; nil when not expanded (LoadStatic) — a pointer so fmt never prints it
	// envErrs are the unset variables (or an empty value) found when
	// expanding: File.Resolve reports them for the tasks that use it.
	envErrs ErrorList
}

// URL returns the expanded URL. It is a secret: never log or print it
// (use redact.String). It is "" when the dagfile was loaded without expansion.
func (c *Connection) URL() string {
	if c.url == nil {
		return ""
	}
	return *c.url
}

// Expanded reports whether URL holds the expanded value.
func (c *Connection) Expanded() bool { return c.url != nil }

// Scheme returns the URL scheme (postgres, iceberg, kafka, file, …): from the
// literal text of Raw when it starts with one, else from the expanded value;
// "" when it cannot be known without the environment. A value without "://"
// is a file path (scheme file).
func (c *Connection) Scheme() string {
	return schemeOf(c.Raw, c.URL())
}

func schemeOf(raw, expanded string) string {
	for _, s := range []string{raw, expanded} {
		if i := strings.Index(s, "://"); i > 0 && !strings.Contains(s[:i], "${") {
			return strings.ToLower(s[:i])
		}
		if s != "" && !strings.Contains(s, "${") && !strings.Contains(s, "://") {
			return "file"
		}
	}
	return ""
}

// String returns "name=<raw value with any literal password redacted>".
func (c Connection) String() string { return c.Name + "=" + redact.String(c.Raw) }

// GoString is String, so %#v does not print the expanded URL either.
func (c Connection) GoString() string { return "dagfile.Connection(" + c.String() + ")" }

var varNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// varRefs returns the variables raw references (sorted, unique) or a syntax
// problem: an unterminated ${ or a bad variable name. $$ is a literal $.
func varRefs(raw string) ([]string, error) {
	var vars []string
	for i := 0; i < len(raw); i++ {
		if raw[i] != '$' || i+1 >= len(raw) {
			continue
		}
		if raw[i+1] == '$' {
			i++
			continue
		}
		if raw[i+1] != '{' {
			continue
		}
		end := strings.IndexByte(raw[i:], '}')
		if end < 0 {
			return nil, fmt.Errorf("unterminated ${ at offset %d: write ${NAME} (and $$ for a literal $)", i)
		}
		name := raw[i+2 : i+end]
		if !varNameRE.MatchString(name) {
			return nil, fmt.Errorf("bad variable name %q in ${…}: use letters, digits and _", name)
		}
		vars = append(vars, name)
		i += end
	}
	slices.Sort(vars)
	return slices.Compact(vars), nil
}

// expand replaces ${VAR} with its value and $$ with $. It returns the names
// of unset variables; raw must have passed varRefs.
func expand(raw string, getenv Getenv) (string, []string) {
	var b strings.Builder
	var missing []string
	for i := 0; i < len(raw); i++ {
		switch {
		case strings.HasPrefix(raw[i:], "$$"):
			b.WriteByte('$')
			i++
		case strings.HasPrefix(raw[i:], "${"):
			end := i + strings.IndexByte(raw[i:], '}')
			v, ok := getenv(raw[i+2 : end])
			if !ok {
				missing = append(missing, raw[i+2:end])
			}
			b.WriteString(v)
			i = end
		default:
			b.WriteByte(raw[i])
		}
	}
	return b.String(), missing
}
