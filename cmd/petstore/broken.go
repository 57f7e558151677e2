//go:build chaosbroken

package main

import (
	"github.com/petstore/petstore/internal/chaos/broken"
	"github.com/petstore/petstore/internal/pets"
)

// A server built with the chaosbroken tag (make chaos-broken) plants the
// defect that PETSTORE_CHAOS_BROKEN names: see internal/chaos/broken.
func init() {
	plantURL = broken.DatabaseURL
	plantStore = func(kind string, s pets.Store) pets.Store { return broken.Store(kind, s) }
	plantOptions = broken.Options
	plantEnv = broken.Env
}
