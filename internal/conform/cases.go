package conform

import (
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/schemagen"
)

// operation is one operation of the spec (cases.Operation).
type operation = cases.Operation

// operation returns the spec's operation with id, or nil.
func (r *run) operation(id string) *operation {
	for _, op := range r.ops {
		if op.ID == id {
			return op
		}
	}
	return nil
}

// value is one value of a parameter or body member (cases.Value).
type value = cases.Value

// valid returns values the schema accepts (cases.Values.Valid), drawn from
// the run's seed.
func (r *run) valid(s *openapi3.Schema) []value { return cases.Values{Rng: r.rng}.Valid(s) }

// gen is a generator of values that takes its choices from the run's seed.
func (r *run) gen() *schemagen.Generator { return schemagen.New(r.rng) }
