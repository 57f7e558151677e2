//go:build chaosbroken

package main

import "github.com/petstore/petstore/internal/chaos/broken"

// A server built with the chaosbroken tag (make chaos-broken) plants the
// defect that PETSTORE_CHAOS_BROKEN names, and writes the evidence that it
// took effect to PETSTORE_CHAOS_EVIDENCE: see internal/chaos/broken.
func init() {
	plant = func(getenv func(string) string) (planted, error) {
		return broken.New(getenv(broken.Env), getenv(broken.EvidenceEnv))
	}
}
