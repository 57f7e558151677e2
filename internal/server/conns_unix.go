//go:build unix

package server

import (
	"math"
	"syscall"
)

// descriptorLimit returns the process's soft limit on open file
// descriptors (which Go raises to the hard limit at start), or 0 when
// unknown.
func descriptorLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return int(min(r.Cur, math.MaxInt32))
}
