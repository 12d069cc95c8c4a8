package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startCPUProfile writes a CPU profile to $WEIR_CPUPROFILE for the whole
// command when it is set: how bench/ figures are explained (go tool pprof).
// The returned func stops it; it is a no-op without the variable.
func startCPUProfile() func() {
	path := os.Getenv("WEIR_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "weir: WEIR_CPUPROFILE=%s: %v\n", path, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
