//go:build !chaosbroken

package pgstore

// broken is empty: the hooks of broken.go compile away.
const broken = ""
