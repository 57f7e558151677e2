//go:build chaosbroken

package pgstore

import "os"

// broken names the fault this build plants, from PETSTORE_CHAOS_BROKEN, to
// prove that the chaos run's checker catches it (make chaos-broken): nolock
// (creates skip the lock that orders ids by commit), asynccommit (a create
// is acknowledged before its commit is durable), nokey (Idempotency-Key is
// ignored), nounknown (a create whose commit may have happened is answered
// as refused). Only builds tagged chaosbroken read it.
var broken = os.Getenv("PETSTORE_CHAOS_BROKEN")
