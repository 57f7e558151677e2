package cases_test

import (
	"math/rand/v2"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform/cases"
)

// A nullable member's valid values include null, which the kit sends and
// the value rules make the member left out; a member that is not nullable
// is never sent null. (Before, no value the kit sent was null: the plain
// rival's plant that refuses null passed, internal/rival.)
func TestValidNull(t *testing.T) {
	t.Parallel()
	g := cases.Values{Rng: rand.New(rand.NewPCG(1, 1))}
	for _, s := range []*openapi3.Schema{openapi3.NewStringSchema(), openapi3.NewInt64Schema(), openapi3.NewFloat64Schema(), openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema())} {
		nulls := func() (n int) {
			for _, v := range g.Valid(s) {
				if v.JSON == nil {
					n++
				}
			}
			return n
		}
		if n := nulls(); n != 0 {
			t.Errorf("%v: not nullable, yet %d values are null", s.Type, n)
		}
		s.Nullable = true
		if n := nulls(); n != 1 {
			t.Errorf("%v: nullable, %d values are null, want 1", s.Type, n)
		}
	}
}
