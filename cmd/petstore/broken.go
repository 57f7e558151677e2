//go:build chaosbroken

package main

import (
	"github.com/petstore/petstore/internal/chaos/broken"
	"github.com/petstore/petstore/internal/server"
)

// A server built with the chaosbroken tag (make chaos-broken) plants the
// defect that PETSTORE_CHAOS_BROKEN names, and writes the evidence that it
// took effect to PETSTORE_CHAOS_EVIDENCE: see internal/chaos/broken.
func init() {
	newPlant = func(getenv func(string) string) (server.Plant, error) {
		p, err := broken.New(getenv(broken.Env), getenv(broken.EvidenceEnv))
		if err != nil {
			return nil, err
		}
		return p, nil
	}
}
