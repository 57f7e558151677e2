package conform

import (
	"context"

	"github.com/petstore/petstore/internal/conform/cases"
)

// The sequences that hold a target to createPet's promises on retries are
// cases' (cases.Replays, cases.KeyEquivalence, cases.RetryHeaders,
// cases.RefusedKeepsNothing, cases.UnkeyedTwice, cases.Tenants,
// cases.Concurrency); the phases send them.

// idempotencyCases: a retry in every equivalent form replays the first
// answer; the key with another pet is 422; a refused create keeps no
// outcome; without a key every create creates.
func (r *run) idempotencyCases(ctx context.Context) error {
	if r.roles.Create == nil || !r.Stated("replay") {
		return nil
	}
	for _, gen := range []func(context.Context, cases.T) error{cases.Replays, cases.KeyEquivalence, cases.RetryHeaders, cases.RefusedKeepsNothing, cases.UnkeyedTwice} {
		if err := r.step(gen)(ctx); err != nil {
			return err
		}
	}
	return nil
}
