package dagfile

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// decoder walks yaml.Node trees of one file and collects errors.
type decoder struct {
	file string
	errs *ErrorList
}

// field is one key: value pair of a mapping, with the dotted path of the key.
type field struct {
	name     string
	key, val *yaml.Node
	path     string
}

// pos is a line and column in a file.
type pos struct{ line, col int }

func nodePos(n *yaml.Node) pos { return pos{n.Line, n.Column} }

// failAt records an error at p.
func (d *decoder) failAt(p pos, key, rule, format string, args ...any) {
	*d.errs = append(*d.errs, &Error{File: d.file, Line: p.line, Col: p.col,
		Key: key, Msg: fmt.Sprintf(format, args...), Rule: rule})
}

// fail records a format error at node n.
func (d *decoder) fail(n *yaml.Node, key, format string, args ...any) {
	d.failAt(nodePos(n), key, RuleFormat, format, args...)
}

// resolve follows aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// kindName names a node kind for messages.
func kindName(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Tag == "!!null":
		return "nothing"
	}
	return fmt.Sprintf("%q", n.Value)
}

// fields returns the pairs of mapping n in document order. Keys not in
// allowed are reported (with the closest allowed key) and dropped; allowed
// nil accepts any key. Repeated keys are reported.
func (d *decoder) fields(n *yaml.Node, path string, allowed []string) []field {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "expected a mapping (key: value pairs), got %s", kindName(n))
		return nil
	}
	var out []field
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		f := field{name: k.Value, key: k, val: v, path: join(path, k.Value)}
		if d.badKey(f, seen, allowed) {
			continue
		}
		seen[k.Value] = k.Line
		out = append(out, f)
	}
	return out
}

// badKey reports a merge key, a repeated key or a key not allowed.
func (d *decoder) badKey(f field, seen map[string]int, allowed []string) bool {
	switch {
	case f.key.Kind != yaml.ScalarNode:
		d.fail(f.key, f.path, "a key must be a plain word, got %s", kindName(f.key))
	case f.name == "<<":
		d.fail(f.key, f.path, "YAML merge keys (<<) are not supported; use defaults: for shared settings")
	case seen[f.name] > 0:
		d.fail(f.key, f.path, "key %q is repeated (first at line %d)", f.name, seen[f.name])
	case allowed != nil && !slicesContains(allowed, f.name):
		d.fail(f.key, f.path, "unknown key %q%s", f.name, didYouMean(f.name, allowed))
	default:
		return false
	}
	return true
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// join builds a dotted key path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// scalar returns the value of a non-empty scalar field.
func (d *decoder) scalar(f field, what string) (string, bool) {
	if f.val.Kind != yaml.ScalarNode || f.val.Tag == "!!null" || f.val.Value == "" {
		d.fail(f.val, f.path, "expected %s, got %s", what, kindName(f.val))
		return "", false
	}
	return f.val.Value, true
}

// str returns a string field.
func (d *decoder) str(f field) string {
	s, _ := d.scalar(f, "a string")
	return s
}

// items returns the entries of a list field as fields ("tables[1]"); a
// scalar is a list of one.
func (d *decoder) items(f field) []field {
	if f.val.Kind != yaml.SequenceNode {
		return []field{f}
	}
	out := make([]field, len(f.val.Content))
	for i, item := range f.val.Content {
		out[i] = field{name: f.name, key: f.key, val: resolve(item), path: fmt.Sprintf("%s[%d]", f.path, i)}
	}
	if len(out) == 0 {
		d.fail(f.val, f.path, "expected at least one value, got an empty list")
	}
	return out
}

// strs returns a field that is one string or a list of strings.
func (d *decoder) strs(f field) []string {
	var out []string
	for _, item := range d.items(f) {
		if s, ok := d.scalar(item, "a string or a list of strings"); ok {
			out = append(out, s)
		}
	}
	return out
}

// integer returns an integer field that must be ≥ least.
func (d *decoder) integer(f field, least int) int {
	s, ok := d.scalar(f, "an integer")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || f.val.Tag != "!!int" || n < least {
		d.fail(f.val, f.path, "expected an integer ≥ %d, got %q", least, s)
		return 0
	}
	return n
}

// boolean returns a true/false field.
func (d *decoder) boolean(f field) bool {
	s, ok := d.scalar(f, "true or false")
	if ok && f.val.Tag != "!!bool" {
		d.fail(f.val, f.path, "expected true or false, got %q", s)
	}
	return ok && f.val.Tag == "!!bool" && (s == "true" || s == "True" || s == "TRUE")
}

// duration returns a Go duration field (90s, 5m, 1h30m), which must be ≥ 0.
func (d *decoder) duration(f field) time.Duration {
	s, ok := d.scalar(f, "a duration such as 90s, 5m or 1h30m")
	if !ok {
		return 0
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		d.fail(f.val, f.path, "bad duration %q: use a number with a unit (s, m, h), e.g. 90s, 5m or 1h30m", s)
		return 0
	}
	return v
}

// enum returns a field whose value must be one of allowed.
func (d *decoder) enum(f field, what string, allowed ...string) string {
	s, ok := d.scalar(f, "one of "+strings.Join(allowed, ", "))
	if !ok {
		return ""
	}
	if !slicesContains(allowed, s) {
		d.fail(f.val, f.path, "bad %s %q%s", what, s, didYouMean(s, allowed))
		return ""
	}
	return s
}

var sizeRE = regexp.MustCompile(`^(\d+)\s*([KMGT]i?B|B)?$`)

// size returns a byte count: an integer or a number with a unit (4MiB, 512KB).
func (d *decoder) size(f field) int64 {
	s, ok := d.scalar(f, "a size such as 4MiB")
	if !ok {
		return 0
	}
	m := sizeRE.FindStringSubmatch(s)
	n, err := int64(0), error(nil)
	if m != nil {
		n, err = strconv.ParseInt(m[1], 10, 64)
	}
	if m == nil || err != nil || n <= 0 {
		d.fail(f.val, f.path, "bad size %q: use bytes or a number with a unit, e.g. 4MiB, 512KiB, 64MB", s)
		return 0
	}
	return n * sizeUnits[m[2]]
}

var sizeUnits = map[string]int64{"": 1, "B": 1,
	"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// name checks a task or connection name.
func (d *decoder) name(n *yaml.Node, path, what string) bool {
	if nameRE.MatchString(n.Value) {
		return true
	}
	d.fail(n, path, "%s name %q is not allowed: use lowercase letters, digits and _, starting with a letter (at most 63)", what, n.Value)
	return false
}
