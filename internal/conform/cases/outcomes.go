package cases

import (
	"fmt"
	"net/http"

	"github.com/petstore/petstore/internal/conform/judge"
)

// Answers the idempotency cases want, and the headers they send.

// CORSOrigin is the Origin the kit's cases send.
const CORSOrigin = "https://conform.example"

// KeyHeader is a header with Idempotency-Key key.
func KeyHeader(key string) http.Header { return http.Header{"Idempotency-Key": {key}} }

// CloneWith is a copy of h with header name given values, and no others.
func CloneWith(h http.Header, name string, values ...string) http.Header {
	c := h.Clone()
	if c == nil {
		c = http.Header{}
	}
	c[http.CanonicalHeaderKey(name)] = values
	return c
}

// NewPetOf wants a 201 that is a new pet: not the kept one, not marked a
// replay.
func NewPetOf(kept int64) judge.Outcome {
	return Created().And(func(x *judge.Exchange) string {
		if id, _ := judge.PetID(x.Body); id == kept || judge.ReplayedOther(x) {
			return fmt.Sprintf("a new pet, not pet %d replayed: another key, or none, is no kept outcome", kept)
		}
		return ""
	})
}

// ReplayOf wants the kept answer again: 201, the kept pet, marked a replay.
func ReplayOf(kept int64) judge.Outcome {
	return Created().And(func(x *judge.Exchange) string {
		if id, _ := judge.PetID(x.Body); id != kept || x.Header.Get("Idempotent-Replayed") != "true" {
			return fmt.Sprintf("pet %d replayed (Idempotent-Replayed: true): the same key", kept)
		}
		return ""
	})
}
