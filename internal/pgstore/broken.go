//go:build chaosbroken

package pgstore

import "os"

// broken names the fault this build plants, from PETSTORE_CHAOS_BROKEN, to
// prove that the chaos run's checker catches it (make chaos-broken). Only
// nolock (creates skip the lock that orders ids by commit) lives here; the
// other kinds wrap the store (internal/chaos/broken). Only builds tagged
// chaosbroken read it.
var broken = os.Getenv("PETSTORE_CHAOS_BROKEN")
