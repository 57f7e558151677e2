//go:build !unix

package main

// descriptorLimit returns 0: unknown outside Unix.
func descriptorLimit() int { return 0 }
