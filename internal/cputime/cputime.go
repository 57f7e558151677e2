// Package cputime reads the CPU time the process has used. Benchmarks
// report it per operation beside the wall time, which on a machine shared
// with other work counts the time the process waited for a core too.
package cputime

import (
	"syscall"
	"time"
)

// Used returns the user and system CPU time of the process so far, all
// threads (the garbage collector's included).
func Used() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Since returns the CPU time used since start, a value of Used.
func Since(start time.Duration) time.Duration {
	return Used() - start
}
