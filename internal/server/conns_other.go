//go:build !unix

package server

// descriptorLimit returns 0: unknown outside Unix.
func descriptorLimit() int { return 0 }
