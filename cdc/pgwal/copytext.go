package pgwal

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/weirhq/weir/cdc"
)

// writeUpsert writes one staged upsert as a COPY text line: the row (an
// Unchanged column as NULL, filled later), its origin key, and the array
// of its Unchanged column names.
func writeUpsert(buf *bytes.Buffer, t *cdc.Table, u *cdc.Upsert) {
	var unchanged []string
	vals := make([]any, 0, len(u.Row)+len(u.Origin)+1)
	for i, v := range u.Row {
		if cdc.IsUnchanged(v) {
			unchanged = append(unchanged, t.Columns[i])
			v = nil
		}
		vals = append(vals, v)
	}
	vals = append(vals, u.Origin...)
	writeRow(buf, append(vals, textArray(unchanged)))
}

// writeRow writes values as one line of COPY's text format.
func writeRow(buf *bytes.Buffer, vals []any) {
	for i, v := range vals {
		if i > 0 {
			buf.WriteByte('\t')
		}
		if v == nil || cdc.IsUnchanged(v) {
			buf.WriteString(`\N`)
			continue
		}
		escapeCopy(buf, textOf(v))
	}
	buf.WriteByte('\n')
}

func textOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	default:
		return fmt.Sprint(x)
	}
}

func escapeCopy(buf *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			buf.WriteString(`\\`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		default:
			buf.WriteByte(c)
		}
	}
}

// textArray renders names as a text[] literal, each element quoted.
func textArray(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		n = strings.ReplaceAll(n, `\`, `\\`)
		q[i] = `"` + strings.ReplaceAll(n, `"`, `\"`) + `"`
	}
	return "{" + strings.Join(q, ",") + "}"
}
