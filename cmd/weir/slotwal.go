package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/weirhq/weir/cdc/pgwal"
)

// slotWALWarn is the --slot-wal-warn size: the WAL a log_based task's
// PostgreSQL slot may retain before runs and weir status warn.
type slotWALWarn int64

func addSlotWALWarn(f *pflag.FlagSet, v *slotWALWarn) {
	*v = pgwal.DefaultSlotWALWarn
	f.Var(v, "slot-wal-warn", "log_based from PostgreSQL: warn when the task's replication slot retains more WAL than this (bytes, or with KiB, MiB, GiB, TiB)")
}

func (v *slotWALWarn) String() string { return strconv.FormatInt(int64(*v), 10) }
func (v *slotWALWarn) Type() string   { return "size" }

func (v *slotWALWarn) Set(s string) error {
	units := []struct {
		suffix string
		mul    int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	mul, num := int64(1), strings.TrimSpace(s)
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			mul, num = u.mul, strings.TrimSpace(strings.TrimSuffix(num, u.suffix))
			break
		}
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("%q is not a size (e.g. 4GiB, 512MiB or bytes)", s)
	}
	*v = slotWALWarn(n * float64(mul))
	return nil
}
