package iceberg

import (
	"os"
	"strconv"
	"strings"
	"sync"
)

// A lease's holder is the process that took it, named so that another
// process on the same machine can tell for sure whether it still runs:
// host, boot id and PID namespace (the same PID means the same process
// only within one kernel boot and one namespace), PID and the process's
// start time (a reused PID starts later). Where /proc does not say (not
// Linux), the holder is "" and only the TTL frees the lease.
type holder struct {
	host, boot, pidns string
	pid               int
	start             string
}

func (h holder) String() string {
	if h.boot == "" {
		return ""
	}
	return strings.Join([]string{h.host, h.boot, h.pidns, strconv.Itoa(h.pid), h.start}, " ")
}

func parseHolder(s string) (holder, bool) {
	f := strings.Split(s, " ")
	if len(f) != 5 {
		return holder{}, false
	}
	pid, err := strconv.Atoi(f[3])
	if err != nil || pid <= 0 {
		return holder{}, false
	}
	return holder{host: f[0], boot: f[1], pidns: f[2], pid: pid, start: f[4]}, true
}

var self = sync.OnceValue(func() holder {
	host, _ := os.Hostname()
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return holder{}
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return holder{}
	}
	start, ok := startTime(os.Getpid())
	if !ok {
		return holder{}
	}
	return holder{host: strings.ReplaceAll(host, " ", "_"), boot: strings.TrimSpace(string(boot)), pidns: ns, pid: os.Getpid(), start: start}
})

// startTime reads field 22 of /proc/PID/stat: when the process started,
// in clock ticks since boot. A zombie (killed, not yet reaped) runs no
// more: it has no start time.
func startTime(pid int) (string, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return "", false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return "", false
	}
	return f[19], true
}

// holderDead reports whether the holder h is certainly gone: a process of
// this machine, this boot and this PID namespace whose PID no longer runs
// or now belongs to a process started at another time. Anything else
// (another machine, a holder that did not say) is not known to be dead.
func holderDead(s string) bool {
	h, ok := parseHolder(s)
	me := self()
	if !ok || me.boot == "" || h.host != me.host || h.boot != me.boot || h.pidns != me.pidns {
		return false
	}
	if h.pid == me.pid {
		return h.start != me.start
	}
	start, running := startTime(h.pid)
	if !running {
		_, err := os.Stat("/proc/" + strconv.Itoa(h.pid))
		return os.IsNotExist(err) || zombie(h.pid)
	}
	return start != h.start
}

func zombie(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(data), ')')
	f := strings.Fields(string(data[i+1:]))
	return i >= 0 && len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}
