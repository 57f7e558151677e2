package check

import (
	"fmt"
	"maps"
	"slices"

	"github.com/petstore/petstore/internal/history"
)

// Creates whose outcome is unknown (no answer, 503 outcome_unknown, a
// fault): the pet may exist. Without a key, each such create allows one
// pet more of its name. With a key, the contract keeps the outcome with
// the pet (a retry with the key replays it if it was stored, creates it if
// not), so however many attempts went unknown, the key has at most one
// pet: the first unknown attempt holds one pet more of its name until an
// answer for the key names the key's pet (settled), after which a pet of
// that name the answer does not account for is a second pet.

// unknownCreate notes o, a create whose outcome is unknown, with sent its
// members and u the use of its name (nil: a name the model does not
// track).
func (m *model) unknownCreate(o *history.Op, sent history.Members, u *nameUse) {
	if o.Key == "" {
		if u != nil {
			u.unknown++
		}
		return
	}
	k := keyID{o.Tenant, o.Key}
	rec := m.keys[k]
	if rec == nil {
		rec = &keyUse{fingerprint: fingerprint(sent)}
		m.keys[k] = rec
	}
	if rec.id != 0 || rec.unknown != nil || u == nil {
		return // the key's pet is known, or already allowed for
	}
	u.unknown++
	rec.unknown = u
}

// settled notes that the key of rec (nil: a key with no earlier attempt)
// has its pet, id: an attempt whose outcome was unknown wrote that pet or
// none. A pet of its name seen before the answer, and not that pet, is a
// second pet for the key.
func (m *model) settled(rec *keyUse, id int64) []Anomaly {
	if rec == nil || rec.unknown == nil {
		return nil
	}
	u := rec.unknown
	rec.unknown = nil
	u.unknown--
	var others []int64
	for found := range u.found {
		if found != id && !u.acked[found] {
			others = append(others, found)
		}
	}
	if len(others) <= u.unknown {
		return nil
	}
	slices.Sort(others)
	return []Anomaly{an(KindDoubled, "idempotent_replay", fmt.Sprintf("one pet for the Idempotency-Key: pet %d, its answer after an attempt whose outcome was unknown", id),
		fmt.Sprintf("also pets %v of its name (acknowledged for the name: %v)", others, slices.Sorted(maps.Keys(u.acked))))}
}
