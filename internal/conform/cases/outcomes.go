package cases

import (
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

// NewPetOf wants a 201 for a create that must make a new pet, not pet
// kept replayed: the checker judges which pet it names (check.Model: a
// pet another create made, answered for a key that kept no outcome or for
// none, fails idempotent_replay).
func NewPetOf(kept int64) judge.Outcome { return Created() }

// ReplayOf wants a 201 for a retry that must get pet kept's answer again:
// the checker judges that it does (check.Model: the key's first answer,
// the same pet and Location, marked Idempotent-Replayed: true).
func ReplayOf(kept int64) judge.Outcome { return Created() }
