package clickhouse

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// isoInterval renders an interval as PostgreSQL's intervalstyle iso_8601
// does (P1Y2M3DT4H5M6.789012S, each field with its own sign, PT0S for
// zero): ClickHouse has no interval type to store it in.
func isoInterval(v arrow.MonthDayNanoInterval) string {
	if v.Months == 0 && v.Days == 0 && v.Nanoseconds == 0 {
		return "PT0S"
	}
	var b strings.Builder
	b.WriteString("P")
	field := func(n int64, unit string) {
		if n != 0 {
			fmt.Fprintf(&b, "%d%s", n, unit)
		}
	}
	field(int64(v.Months/12), "Y")
	field(int64(v.Months%12), "M")
	field(int64(v.Days), "D")
	if v.Nanoseconds == 0 {
		return b.String()
	}
	ns := v.Nanoseconds
	b.WriteString("T")
	field(ns/3_600_000_000_000, "H")
	field(ns/60_000_000_000%60, "M")
	if sec := ns % 60_000_000_000; sec != 0 {
		b.WriteString(seconds(sec))
		b.WriteString("S")
	}
	return b.String()
}

// seconds renders nanoseconds as seconds with the fraction's trailing
// zeros dropped, e.g. -0.000001.
func seconds(ns int64) string {
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	s := strconv.FormatInt(ns/1_000_000_000, 10)
	if frac := ns % 1_000_000_000; frac != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%09d", frac), "0")
	}
	return sign + s
}
