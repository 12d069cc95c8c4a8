package postgres

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// appendUpsert appends one staged upsert as a COPY text line: the row (an
// Unchanged column as NULL, filled later), its origin key, and the array
// of its Unchanged column names; partial reports an Unchanged column.
func appendUpsert(b []byte, t *cdc.Table, u *cdc.Upsert) (_ []byte, partial bool) {
	for i, v := range u.Row {
		if cdc.IsUnchanged(v) {
			partial = true
		}
		if i > 0 {
			b = append(b, '\t')
		}
		b = appendCopyValue(b, v)
	}
	for _, v := range u.Origin {
		b = appendCopyValue(append(b, '\t'), v)
	}
	b = append(b, '\t')
	if !partial {
		return append(b, "{}\n"...), false
	}
	var unchanged []string
	for i, v := range u.Row {
		if cdc.IsUnchanged(v) {
			unchanged = append(unchanged, t.Columns[i])
		}
	}
	return append(appendCopyEscaped(b, textArray(unchanged)), '\n'), true
}

// appendTextRow appends values as one line of COPY's text format.
func appendTextRow(b []byte, vals []any) []byte {
	for i, v := range vals {
		if i > 0 {
			b = append(b, '\t')
		}
		b = appendCopyValue(b, v)
	}
	return append(b, '\n')
}

// appendCopyValue appends one value as COPY text: NULL (nil, Unchanged) as
// \N, anything else as PostgreSQL's input text of it (see pgText),
// escaped.
func appendCopyValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, `\N`...)
	case string:
		return appendCopyEscaped(b, x)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case int32:
		return strconv.AppendInt(b, int64(x), 10)
	case int16:
		return strconv.AppendInt(b, int64(x), 10)
	case int8:
		return strconv.AppendInt(b, int64(x), 10)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case uint64:
		return strconv.AppendUint(b, x, 10)
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10)
	case []byte: // bytea hex; its backslash is escaped for COPY
		return hex.AppendEncode(append(b, `\\x`...), x)
	case bool:
		return strconv.AppendBool(b, x)
	case time.Time:
		return x.AppendFormat(b, pgTimeLayout)
	case float32:
		return strconv.AppendFloat(b, float64(x), 'g', -1, 32)
	case float64:
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	}
	if cdc.IsUnchanged(v) {
		return append(b, `\N`...)
	}
	return appendCopyEscaped(b, pgText(v))
}

// pgTimeLayout renders a time with its zone (a timestamp column drops it).
const pgTimeLayout = "2006-01-02 15:04:05.999999Z07:00"

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
		return x.Format(pgTimeLayout)
	case arrow.MonthDayNanoInterval:
		return routes.IntervalText(x)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	default:
		return fmt.Sprint(x)
	}
}

// appendCopyEscaped appends s with COPY text's escapes for backslash,
// newline, carriage return and tab. It reads s 8 bytes a word first
// (mayEscape) and appends it whole when no word can hold one of them, as
// nearly every value does; from the first word that may, byte by byte.
func appendCopyEscaped(b []byte, s string) []byte {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if mayEscape(uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56) {
			break
		}
	}
	start := 0
	for ; i < len(s); i++ {
		if !copySpecial[s[i]] { // one look-up a byte
			continue
		}
		var esc string
		switch s[i] {
		case '\\':
			esc = `\\`
		case '\n':
			esc = `\n`
		case '\r':
			esc = `\r`
		case '\t':
			esc = `\t`
		}
		b = append(append(b, s[start:i]...), esc...)
		start = i + 1
	}
	return append(b, s[start:]...)
}

// mayEscape reports whether a word of 8 bytes may hold a byte COPY text
// escapes: a backslash, or a byte below 0x0e (tab, newline and carriage
// return are 0x09, 0x0a, 0x0d; the other control bytes below it only
// send the word to the byte loop, which leaves them as they are).
func mayEscape(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	bs := x ^ (ones * '\\')                            // a zero byte where x holds a backslash
	return ((bs-ones)&^bs|(x-ones*0x0e)&^x)&highs != 0 // a zero byte, or a byte below 0x0e
}

// copySpecial marks the bytes COPY's text format escapes.
var copySpecial = [256]bool{'\\': true, '\n': true, '\r': true, '\t': true}

// textArray renders names as a text[] literal, each element quoted.
func textArray(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		n = strings.ReplaceAll(n, `\`, `\\`)
		q[i] = `"` + strings.ReplaceAll(n, `"`, `\"`) + `"`
	}
	return "{" + strings.Join(q, ",") + "}"
}
