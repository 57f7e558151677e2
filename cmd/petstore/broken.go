//go:build chaosbroken

package main

import "github.com/petstore/petstore/internal/chaos/broken"

// A server built with the chaosbroken tag (make chaos-broken) plants the
// defect that PETSTORE_CHAOS_BROKEN names: see internal/chaos/broken.
func init() {
	plantURL = broken.DatabaseURL
	plantStore = broken.Store
	plantOptions = broken.Options
	plantEnv = broken.Env
}
