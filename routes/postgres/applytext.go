package postgres

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

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
	writeTextRow(buf, append(vals, textArray(unchanged)))
}

// writeTextRow writes values as one line of COPY's text format.
func writeTextRow(buf *bytes.Buffer, vals []any) {
	for i, v := range vals {
		if i > 0 {
			buf.WriteByte('\t')
		}
		if v == nil || cdc.IsUnchanged(v) {
			buf.WriteString(`\N`)
			continue
		}
		escapeCopy(buf, pgText(v))
	}
	buf.WriteByte('\n')
}

// pgText renders a change value as PostgreSQL's input text: strings as
// they are (pgoutput's text output), bytes as bytea hex, times with their
// zone (a timestamp column drops it), numbers in full precision.
func pgText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return `\x` + hex.EncodeToString(x)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return x.Format("2006-01-02 15:04:05.999999Z07:00")
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
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
