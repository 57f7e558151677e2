// Package schematest is what tests need beside schemagen: a Source over
// pgregory.net/rapid, whose failing cases shrink toward the simplest value,
// and openapi.yaml evolved with members of every kind a data member may be.
// Only tests import it: rapid stays out of every binary.
package schematest

import (
	"encoding/json"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
	"pgregory.net/rapid"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/schemagen"
)

// Rapid is a schemagen.Source that draws its choices from t: a property
// that fails is shrunk to the simplest values that still fail it.
func Rapid(t *rapid.T) schemagen.Source { return rapidSource{t} }

type rapidSource struct{ t *rapid.T }

func (s rapidSource) IntN(n int) int { return rapid.IntRange(0, n-1).Draw(s.t, "choice") }

// Members are the optional members Evolve adds to NewPet and Pet, one of
// each kind the drill of issue 50 adds and more: an array of distinct
// strings, an object of two scalars, a string with a pattern, a date, a
// number with an exclusive bound, and a boolean with a default; and one of
// each kind whose value is not its text (issue 59): a float, a date-time, a
// number without a format, an object whose member has a default, and a
// nullable string.
var Members = map[string]string{
	"tags": `{"type": "array", "maxItems": 10, "uniqueItems": true,
		"items": {"type": "string", "minLength": 1, "maxLength": 32}}`,
	"size": `{"type": "object", "additionalProperties": false, "required": ["height", "unit"],
		"properties": {"height": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 1000},
			"unit": {"type": "string", "enum": ["cm", "in"]}}}`,
	"chip":       `{"type": "string", "pattern": "^(ISO )?[0-9]{15}$", "maxLength": 19}`,
	"born":       `{"type": "string", "format": "date"}`,
	"weight":     `{"type": "number", "format": "double", "minimum": 0, "exclusiveMinimum": true, "maximum": 1000}`,
	"vaccinated": `{"type": "boolean", "default": false}`,
	"ratio":      `{"type": "number", "format": "float"}`,
	"seen":       `{"type": "string", "format": "date-time"}`,
	"score":      `{"type": "number"}`,
	"care": `{"type": "object", "additionalProperties": false,
		"properties": {"level": {"type": "integer", "format": "int32", "default": 3}, "note": {"type": "string", "maxLength": 20}}}`,
	"nick": `{"type": "string", "nullable": true, "maxLength": 10}`,
}

// Evolve adds Members to the NewPet and Pet schemas of spec, optional in
// both, as a new minor version of openapi.yaml would. A member the schema
// has already keeps its own schema: the server built from spec knows it so
// (a tree the evolution drill made has its own tags, chip and size).
func Evolve(spec *openapi3.T) error {
	for _, schema := range []string{"NewPet", "Pet"} {
		ref := spec.Components.Schemas[schema]
		if ref == nil || ref.Value == nil {
			return fmt.Errorf("schematest: no schema %s", schema)
		}
		for name, text := range Members {
			if _, has := ref.Value.Properties[name]; has {
				continue
			}
			var s openapi3.Schema
			if err := json.Unmarshal([]byte(text), &s); err != nil {
				return fmt.Errorf("schematest: member %s: %w", name, err)
			}
			ref.Value.Properties[name] = openapi3.NewSchemaRef("", &s)
		}
	}
	return spec.Validate(openapi3.NewLoader().Context)
}

// Evolved is the embedded openapi.yaml, evolved.
func Evolved() (*openapi3.T, error) {
	spec, err := gen.GetSpec()
	if err != nil {
		return nil, err
	}
	return spec, Evolve(spec)
}
