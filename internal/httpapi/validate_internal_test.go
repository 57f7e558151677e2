package httpapi

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestCheckedByStrict: only an integer parameter whose schema says nothing
// but its type, format and bounds, in the path or optional in the query, is
// left out of kin-openapi's validation; anything strict.Int does not check
// keeps kin-openapi's.
func TestCheckedByStrict(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	yes := true
	intSchema := func(edit func(*openapi3.Schema)) *openapi3.SchemaRef {
		s := openapi3.NewInt64Schema()
		s.Min, s.Max = f(1), f(100)
		if edit != nil {
			edit(s)
		}
		return s.NewRef()
	}
	for _, tc := range []struct {
		name string
		p    *openapi3.Parameter
		want bool
	}{
		{"path integer", &openapi3.Parameter{In: "path", Name: "petId", Required: true, Schema: intSchema(nil)}, true},
		{"optional query integer with bounds", &openapi3.Parameter{In: "query", Name: "limit", Schema: intSchema(nil)}, true},
		{"int32", &openapi3.Parameter{In: "query", Name: "limit", Schema: intSchema(func(s *openapi3.Schema) { s.Format = "int32" })}, true},
		{"required query integer", &openapi3.Parameter{In: "query", Name: "limit", Required: true, Schema: intSchema(nil)}, false},
		{"header integer", &openapi3.Parameter{In: "header", Name: "X-N", Schema: intSchema(nil)}, false},
		{"enum", &openapi3.Parameter{In: "query", Name: "n", Schema: intSchema(func(s *openapi3.Schema) { s.Enum = []any{1, 2} })}, false},
		{"multipleOf", &openapi3.Parameter{In: "query", Name: "n", Schema: intSchema(func(s *openapi3.Schema) { s.MultipleOf = f(5) })}, false},
		{"exclusiveMinimum", &openapi3.Parameter{In: "query", Name: "n", Schema: intSchema(func(s *openapi3.Schema) { s.ExclusiveMin = openapi3.ExclusiveBound{Bool: &yes} })}, false},
		{"nullable", &openapi3.Parameter{In: "query", Name: "n", Schema: intSchema(func(s *openapi3.Schema) { s.Nullable = true })}, false},
		{"another format", &openapi3.Parameter{In: "query", Name: "n", Schema: intSchema(func(s *openapi3.Schema) { s.Format = "uint8" })}, false},
		{"string", &openapi3.Parameter{In: "query", Name: "status", Schema: openapi3.NewStringSchema().NewRef()}, false},
		{"content", &openapi3.Parameter{In: "query", Name: "n", Content: openapi3.NewContentWithJSONSchema(openapi3.NewInt64Schema())}, false},
	} {
		if got := checkedByStrict(tc.p); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
