package gsheets

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// headerNames turns the header row's cells into column names every
// destination takes: blanks and control characters inside a name become
// one space, surrounding ones are trimmed; a blank cell is column_N (N its
// 1-based position); a name that repeats an earlier one (ignoring case,
// as MySQL and BigQuery do) gets _2, _3, …, skipping names already taken.
func headerNames(cells []any) []string {
	names := make([]string, len(cells))
	taken := map[string]bool{}
	for i, c := range cells {
		n := cleanName(cellText(c))
		if n == "" {
			n = "column_" + strconv.Itoa(i+1)
		}
		base := n
		for k := 2; taken[strings.ToLower(n)]; k++ {
			n = fmt.Sprintf("%s_%d", base, k)
		}
		taken[strings.ToLower(n)] = true
		names[i] = n
	}
	return names
}

// cleanName collapses runs of blanks and control characters into one
// space and trims the ends.
func cleanName(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
}

// columnLetters is the A1 name of 1-based column n: A … Z, AA, AB, ….
func columnLetters(n int) string {
	var b []byte
	for ; n > 0; n = (n - 1) / 26 {
		b = append([]byte{byte('A' + (n-1)%26)}, b...)
	}
	return string(b)
}

// a1 is the A1 range of rows from..to, columns 1..cols, of tab: the
// title quoted, its quotes doubled ('It”s'!A2:Z1000).
func a1(tab string, fromCol, toCol, from, to int) string {
	return fmt.Sprintf("'%s'!%s%d:%s%d", strings.ReplaceAll(tab, "'", "''"), columnLetters(fromCol), from, columnLetters(toCol), to)
}
