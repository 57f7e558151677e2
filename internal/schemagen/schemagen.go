// Package schemagen makes JSON values from the schemas of an OpenAPI
// document, as kin-openapi loads them: values a schema accepts, drawn from
// a Source of choices (Value), and values at each bound it sets, labelled
// (Bounds): the shortest and longest strings, in and outside the Basic
// Multilingual Plane, the fewest and most items, the extremes of integers,
// every enum value, every member of an object and each alone.
//
// It covers the subset of JSON Schema an OpenAPI 3.0 document uses: object
// (properties, required, additionalProperties), array (items, minItems,
// maxItems, uniqueItems), string (minLength, maxLength, pattern, enum,
// format), integer and number (format, minimum, maximum, exclusive bounds,
// multipleOf), boolean, allOf, $ref (resolved by the loader) and default.
// A pattern is read with Go's regexp/syntax, as kin-openapi reads it, and
// walked to build strings that match it. Every value is checked against its
// schema with kin-openapi's VisitJSON before it is returned: a schema the
// generator cannot satisfy is an error, never an invalid value.
//
// Values are JSON-ready Go values: nil, bool, json.Number (exact), string,
// []any and map[string]any; encoding/json writes them, and package value
// says what they mean. The generator draws only values whose round trip
// the contract defines (package value): a float within float32's range, a
// date-time naming an instant RFC 3339 can write in UTC.
package schemagen

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/value"
)

// Source gives the generator its choices: IntN returns a number in [0, n),
// for n > 0. Smaller is simpler: choice 0 is the simplest value (the
// shortest string, the fewest items, the integer nearest zero), so a source
// that shrinks its choices toward 0 (pgregory.net/rapid, in tests) shrinks
// values toward the simplest. *rand.Rand of math/rand/v2 is a Source: a
// seeded one replays the same values.
type Source interface {
	IntN(n int) int
}

// Members says which optional members of an object a generator gives.
type Members int

const (
	// SomeMembers gives each optional member or leaves it out, by the
	// source's choice.
	SomeMembers Members = iota
	// AllMembers gives every member.
	AllMembers
	// RequiredMembers gives the required members only.
	RequiredMembers
)

// Generator draws values from schemas; it is not safe for concurrent use
// (nor is a *rand.Rand).
type Generator struct {
	src Source
	// Members says which optional members objects get, at every depth.
	Members Members
}

// New returns a generator that takes its choices from src.
func New(src Source) *Generator { return &Generator{src: src} }

// ErrUnsatisfiable is wrapped by the error of a schema the generator found
// no value for.
var ErrUnsatisfiable = errors.New("schemagen: no value satisfies the schema")

// tries bounds the values drawn for one schema until one is valid.
const tries = 32

// Value returns a value s accepts.
func (g *Generator) Value(s *openapi3.Schema) (any, error) {
	return g.valid(s, func() (any, error) { return g.value(s, 0) })
}

// valid draws values with draw until s accepts one.
func (g *Generator) valid(s *openapi3.Schema, draw func() (any, error)) (any, error) {
	var last error
	for range tries {
		v, err := draw()
		if err != nil {
			last = err
			continue
		}
		if err := s.VisitJSON(v); err != nil {
			last = err
			continue
		}
		return v, nil
	}
	return nil, fmt.Errorf("%w: %v", ErrUnsatisfiable, last)
}

// pick is a choice in [0, n); with one choice, none is drawn.
func (g *Generator) pick(n int) int {
	if n <= 1 {
		return 0
	}
	return g.src.IntN(n)
}

// maxDepth bounds the nesting of a generated value: a recursive schema
// stops at its required members.
const maxDepth = 8

// value draws a value of s, not yet checked.
func (g *Generator) value(s *openapi3.Schema, depth int) (any, error) {
	s = Flat(s)
	if s == nil {
		return nil, errors.New("schemagen: no schema")
	}
	if alts := alternatives(s); alts != nil && depth < maxDepth { // one of them, checked against s by the caller
		if alt := alts[g.pick(len(alts))]; alt != nil {
			return g.value(alt.Value, depth+1)
		}
	}
	if len(s.Enum) > 0 {
		return value.FromSpec(s.Enum[g.pick(len(s.Enum))]), nil
	}
	switch typeOf(s, g) {
	case openapi3.TypeBoolean:
		return g.pick(2) == 1, nil
	case openapi3.TypeInteger:
		return g.integer(s), nil
	case openapi3.TypeNumber:
		return g.number(s), nil
	case openapi3.TypeString:
		return g.str(s, lengthAny, alphaAny)
	case openapi3.TypeArray:
		return g.array(s, itemsAny, depth)
	case openapi3.TypeObject:
		return g.object(s, g.Members, depth)
	case openapi3.TypeNull:
		return nil, nil
	}
	return nil, fmt.Errorf("schemagen: unknown type %v", s.Type)
}

// typeOf is the JSON type of s: its type (one of them, when it lists
// several), or the type its keywords imply.
func typeOf(s *openapi3.Schema, g *Generator) string {
	if s.Type != nil && len(*s.Type) > 0 {
		ts := *s.Type
		if g == nil {
			return ts[0]
		}
		return ts[g.pick(len(ts))]
	}
	switch {
	case s.Properties != nil || len(s.Required) > 0:
		return openapi3.TypeObject
	case s.Items != nil:
		return openapi3.TypeArray
	case s.Pattern != "" || s.MaxLength != nil || s.MinLength > 0:
		return openapi3.TypeString
	case s.Min != nil || s.Max != nil:
		return openapi3.TypeNumber
	}
	return openapi3.TypeString
}

// Flat returns s with its allOf merged in (the tightest bound of each
// keyword, the union of properties and required members), the way OpenAPI
// 3.0 writes a $ref with siblings: `allOf: [$ref]` and a default. Keywords
// it cannot merge (two patterns) are kept from s; every value is checked
// against the whole schema anyway.
func Flat(s *openapi3.Schema) *openapi3.Schema {
	if s == nil || len(s.AllOf) == 0 {
		return s
	}
	out := *s
	out.AllOf = nil
	for _, ref := range s.AllOf {
		if ref == nil || ref.Value == nil {
			continue
		}
		merge(&out, Flat(ref.Value))
	}
	return &out
}

// merge narrows s by t, keeping s's own pattern and format (a default is
// package value's to read, never the generator's).
func merge(s, t *openapi3.Schema) {
	if s.Type == nil || len(*s.Type) == 0 {
		s.Type = t.Type
	}
	if s.Format == "" {
		s.Format = t.Format
	}
	if s.Pattern == "" {
		s.Pattern = t.Pattern
	}
	switch {
	case len(s.Enum) == 0:
		s.Enum = t.Enum
	case len(t.Enum) > 0:
		s.Enum = slices.DeleteFunc(slices.Clone(s.Enum), func(v any) bool {
			return !slices.ContainsFunc(t.Enum, func(w any) bool { return value.Equal(value.FromSpec(v), value.FromSpec(w), nil) })
		})
	}
	s.MinLength = max(s.MinLength, t.MinLength)
	s.MaxLength = minPtr(s.MaxLength, t.MaxLength)
	s.MinItems = max(s.MinItems, t.MinItems)
	s.MaxItems = minPtr(s.MaxItems, t.MaxItems)
	s.UniqueItems = s.UniqueItems || t.UniqueItems
	if t.Min != nil && (s.Min == nil || *t.Min > *s.Min) {
		s.Min, s.ExclusiveMin = t.Min, t.ExclusiveMin
	}
	if t.Max != nil && (s.Max == nil || *t.Max < *s.Max) {
		s.Max, s.ExclusiveMax = t.Max, t.ExclusiveMax
	}
	if s.MultipleOf == nil {
		s.MultipleOf = t.MultipleOf
	}
	if s.Items == nil {
		s.Items = t.Items
	}
	if len(t.Properties) > 0 {
		props := maps.Clone(s.Properties)
		if props == nil {
			props = openapi3.Schemas{}
		}
		for name, ref := range t.Properties {
			if mine, ok := props[name]; ok && mine != nil && mine.Value != nil && ref != nil && ref.Value != nil {
				props[name] = openapi3.NewSchemaRef("", &openapi3.Schema{AllOf: openapi3.SchemaRefs{mine, ref}})
			} else {
				props[name] = ref
			}
		}
		s.Properties = props
	}
	for _, r := range t.Required {
		if !slices.Contains(s.Required, r) {
			s.Required = append(slices.Clip(s.Required), r)
		}
	}
	if t.AdditionalProperties.Has != nil && !*t.AdditionalProperties.Has {
		s.AdditionalProperties = t.AdditionalProperties
	}
}

func minPtr(a, b *uint64) *uint64 {
	switch {
	case a == nil:
		return b
	case b == nil || *a <= *b:
		return a
	}
	return b
}
