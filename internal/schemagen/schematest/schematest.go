// Package schematest is what tests need beside schemagen: a Source over
// pgregory.net/rapid, whose failing cases shrink toward the simplest value,
// and openapi.yaml evolved with members of every kind a data member may be.
// Only tests import it: rapid stays out of every binary.
package schematest

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

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
// both, as a new minor version of openapi.yaml would, each under its Name:
// never a member the spec names, whatever members it gains.
func Evolve(spec *openapi3.T) error {
	for _, schema := range []string{"NewPet", "Pet"} {
		ref := spec.Components.Schemas[schema]
		if ref == nil || ref.Value == nil {
			return fmt.Errorf("schematest: no schema %s", schema)
		}
		for name, text := range Members {
			if _, has := ref.Value.Properties[Name(name)]; has {
				return fmt.Errorf("schematest: %s has a member %s already", schema, Name(name))
			}
			var s openapi3.Schema
			if err := json.Unmarshal([]byte(text), &s); err != nil {
				return fmt.Errorf("schematest: member %s: %w", name, err)
			}
			ref.Value.Properties[Name(name)] = openapi3.NewSchemaRef("", &s)
		}
	}
	return spec.Validate(openapi3.NewLoader().Context)
}

// Name is the name a test gives a member it makes up (one of Members, or
// one of its own): base after Prefix.
func Name(base string) string { return Prefix() + base }

// Prefix is what every made-up member's name begins with: the shortest of
// "x_", "xx_", … that begins no member of any schema of the embedded spec
// (openapi.yaml), at any depth, so that no member the spec gains (a
// vaccinated, a color of its own) is ever taken for one a test made up.
var Prefix = sync.OnceValue(func() string {
	spec, err := gen.GetSpec()
	if err != nil {
		panic(err) // the embedded spec is generated and validated by make generate
	}
	var names []string
	for _, ref := range spec.Components.Schemas {
		names = appendMembers(names, ref.Value, 0)
	}
	for p := "x_"; ; p = "x" + p {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, p) }) {
			return p
		}
	}
})

// appendMembers adds the names of s's members, and of theirs, to names.
func appendMembers(names []string, s *openapi3.Schema, depth int) []string {
	if s == nil || depth > 16 {
		return names
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		names = append(names, name)
		names = appendMembers(names, s.Properties[name].Value, depth+1)
	}
	if s.Items != nil {
		names = appendMembers(names, s.Items.Value, depth+1)
	}
	for _, refs := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
		for _, r := range refs {
			names = appendMembers(names, r.Value, depth+1)
		}
	}
	return names
}

// madeUp matches a member's name in JSON text: a string before a colon.
var madeUp = regexp.MustCompile(`"([A-Za-z_][A-Za-z0-9_]*)"(\s*:)`)

// JSON is text, JSON a test wrote, with the members named in bases renamed
// by Name: a test writes {"tags":["x"]} and sends what Evolve names.
func JSON(text string, bases ...string) string {
	return madeUp.ReplaceAllStringFunc(text, func(m string) string {
		sub := madeUp.FindStringSubmatch(m)
		if slices.Contains(bases, sub[1]) {
			return `"` + Name(sub[1]) + `"` + sub[2]
		}
		return m
	})
}

// Made renames Members' members in text (JSON): JSON with Members' names.
func Made(text string) string { return JSON(text, slices.Collect(maps.Keys(Members))...) }

// Evolved is the embedded openapi.yaml, evolved.
func Evolved() (*openapi3.T, error) {
	spec, err := gen.GetSpec()
	if err != nil {
		return nil, err
	}
	return spec, Evolve(spec)
}
