package conform

import (
	"context"
	"net/http"

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
	if r.roles.Create == nil || !r.stated("replay") {
		return nil
	}
	for _, gen := range []func(context.Context, cases.T) error{cases.Replays, cases.KeyEquivalence, cases.RetryHeaders, cases.RefusedKeepsNothing, cases.UnkeyedTwice} {
		if err := r.step(gen)(ctx); err != nil {
			return err
		}
	}
	return nil
}

func keyHeader(key string) http.Header { return cases.KeyHeader(key) }

// replayOf wants the kept answer again (cases.ReplayOf).
func replayOf(kept int64) outcome { return cases.ReplayOf(kept) }

// nearMissCases sends the catalogue of near misses (cases.NearMissCases):
// last says which rows, the ones sent last or the others.
func (r *run) nearMissCases(ctx context.Context, last bool) error {
	return cases.NearMissCases(ctx, r, last)
}

// NearMisses is the catalogue of near misses, a row each (cases.NearMisses):
// the value, the near miss, the answer the contract requires, and the
// sentence it rests on. docs/conformance-kit.md lists it.
func NearMisses() [][4]string { return cases.NearMisses() }
