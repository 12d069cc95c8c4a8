package objstore

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// parseTime reads the timestamp forms of CSV files: 2024-01-31,
// 2024-01-31 12:00:00[.frac], a T instead of the space, an optional Z or
// ±hh[:mm] offset. zoned says whether the text named an offset.
func parseTime(s string) (t time.Time, zoned bool, ok bool) {
	ts, zoned, err := arrow.TimestampFromStringInLocation(s, arrow.Microsecond, time.UTC)
	if err != nil {
		return time.Time{}, false, false
	}
	return ts.ToTime(arrow.Microsecond), zoned, true
}
