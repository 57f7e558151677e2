package conform

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/schemagen"
)

// The values of the schemas the kit's own cases do not spell out (arrays,
// objects, numbers, strings of a format or of a pattern its alphabets do not
// meet) come from the schema itself (internal/schemagen), drawn from the
// run's seed: valid ones at every bound, and ones that break one rule each.

// gen is a generator of values that takes its choices from the run's seed.
func (r *run) gen() *schemagen.Generator { return schemagen.New(r.rng) }

// schemaValues are the values of s at each of its bounds, from the schema.
func (r *run) schemaValues(s *openapi3.Schema) []value {
	cs, err := r.gen().Bounds(s)
	if err != nil {
		return nil // a schema nothing satisfies: no valid value to send
	}
	vs := make([]value, 0, len(cs))
	for _, c := range cs {
		vs = append(vs, jsonCase(c.Label, c.Value))
	}
	return vs
}

// jsonCase is a value as a body member, and as text its string, or its
// JSON.
func jsonCase(label string, v any) value {
	if s, ok := v.(string); ok {
		return value{label: label, text: s, json: s}
	}
	return value{label: label, text: string(mustJSON(v)), json: v}
}

// fixed draws the valid fillers of the invalid values: the same for the
// same schema, whatever the seed, as invalid's own values are.
func fixed() *schemagen.Generator { return schemagen.New(rand.New(rand.NewPCG(1, 2))) }

// invalidNested returns values that break exactly one rule of an array, an
// object or a number schema each: too few or too many items, an item twice
// where they must be distinct, one item that breaks a rule of the items; a
// required member left out, a member the schema does not name, one member
// that breaks a rule of its own; a number below or above its range; and a
// value of another type.
func invalidNested(s *openapi3.Schema) []value {
	var vs []value
	switch {
	case isType(s, "array"):
		vs = invalidArray(s)
	case isType(s, "object"):
		vs = invalidObject(s)
	case isType(s, "number"):
		if s.Min != nil {
			below := *s.Min - math.Max(1, math.Abs(*s.Min)/2)
			if s.ExclusiveMin.IsTrue() {
				below = *s.Min
			}
			vs = append(vs, value{label: "below minimum", json: json.Number(strconv.FormatFloat(below, 'g', -1, 64))})
		}
		if s.Max != nil {
			above := *s.Max + math.Max(1, math.Abs(*s.Max)/2)
			if s.ExclusiveMax.IsTrue() {
				above = *s.Max
			}
			vs = append(vs, value{label: "above maximum", json: json.Number(strconv.FormatFloat(above, 'g', -1, 64))})
		}
	}
	return append(vs, value{label: "wrong type: string", json: "1"})
}

// items draws n distinct valid items of s's item schema.
func items(s *openapi3.Schema, n int) ([]any, bool) {
	item := &openapi3.Schema{}
	if s.Items != nil && s.Items.Value != nil {
		item = s.Items.Value
	}
	g := fixed()
	seen := map[string]bool{}
	var out []any
	for tries := 0; len(out) < n && tries < 40*n+40; tries++ {
		v, err := g.Value(item)
		if err != nil {
			return nil, false
		}
		if c, _ := schemagen.Canonical(v); !seen[string(c)] {
			seen[string(c)] = true
			out = append(out, v)
		}
	}
	return out, len(out) == n
}

func invalidArray(s *openapi3.Schema) []value {
	var vs []value
	if s.MinItems > 0 {
		if few, ok := items(s, int(s.MinItems)-1); ok {
			vs = append(vs, value{label: "too few items", json: append([]any{}, few...)})
		}
	}
	if s.MaxItems != nil && *s.MaxItems < 1<<10 {
		if many, ok := items(s, int(*s.MaxItems)+1); ok {
			vs = append(vs, value{label: "too many items", json: many})
		}
	}
	least := max(int(s.MinItems), 1)
	if s.UniqueItems && (s.MaxItems == nil || *s.MaxItems >= 2) {
		if some, ok := items(s, max(least-1, 1)); ok {
			vs = append(vs, value{label: "an item twice", json: append(some, some[0])})
		}
	}
	if s.Items != nil && s.Items.Value != nil && (s.MaxItems == nil || *s.MaxItems >= 1) {
		rest, ok := items(s, least-1)
		for _, bad := range invalid(s.Items.Value, true) {
			if ok {
				vs = append(vs, value{label: "an item: " + bad.label, json: append([]any{bad.json}, rest...)})
			}
		}
	}
	return vs
}

func invalidObject(s *openapi3.Schema) []value {
	g := fixed()
	g.Members = schemagen.RequiredMembers
	base, err := g.Value(s)
	obj, ok := base.(map[string]any)
	if err != nil || !ok {
		return nil
	}
	with := func(name string, v any) map[string]any {
		c := make(map[string]any, len(obj)+1)
		for k, m := range obj {
			c[k] = m
		}
		if v == absent {
			delete(c, name)
		} else {
			c[name] = v
		}
		return c
	}
	var vs []value
	for _, name := range s.Required {
		vs = append(vs, value{label: fmt.Sprintf("%s: required, missing", name), json: with(name, absent)})
	}
	if s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has {
		vs = append(vs, value{label: "an unknown member", json: with("conformUnknown", 1)})
	}
	for _, name := range sortedKeys(s.Properties) {
		if ref := s.Properties[name]; ref != nil && ref.Value != nil {
			for _, bad := range invalid(ref.Value, true) {
				vs = append(vs, value{label: name + ": " + bad.label, json: with(name, bad.json)})
			}
		}
	}
	return vs
}
