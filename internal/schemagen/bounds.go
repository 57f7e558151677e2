package schemagen

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/value"
)

// Case is a value of a schema at one of its bounds, and which.
type Case struct {
	Label string // "longest, outside the BMP", "most items", "tags: item: shortest"
	Value any
}

// Bounds returns values of s at each of its bounds, each one s accepts:
// every enum value; an integer's or a number's minimum, maximum and one
// between; a string's shortest and longest, the longest in ASCII, in
// letters of other scripts and in characters outside the Basic
// Multilingual Plane, and one of mixed characters between (a format's:
// one value of it); an array's fewest and most items (strings at their
// longest), and one item at each bound of its items; an object with its
// required members only, with every member, and with each member at each
// of its bounds; null, when s is nullable. The cases are the same for the same choices of the
// source; the characters and items that fill them are drawn from it.
func (g *Generator) Bounds(s *openapi3.Schema) ([]Case, error) {
	return g.bounds(s, 0)
}

func (g *Generator) bounds(s *openapi3.Schema, depth int) ([]Case, error) {
	cs, err := g.nonNull(s, depth)
	if flat := Flat(s); err == nil && flat != nil && flat.Nullable {
		// null is a value of a nullable schema like any other (openapi.yaml:
		// of an optional member without a default, the member left out)
		cs = append(cs, Case{"null", nil})
	}
	return cs, err
}

// nonNull are the bounds of s but null.
func (g *Generator) nonNull(s *openapi3.Schema, depth int) ([]Case, error) {
	flat := Flat(s)
	if flat == nil {
		return nil, nil
	}
	if alts := alternatives(flat); alts != nil {
		return g.alternativeBounds(s, alts, depth)
	}
	if len(flat.Enum) > 0 {
		var cs []Case
		for _, e := range flat.Enum {
			v := value.FromSpec(e)
			cs = append(cs, Case{"enum " + value.Text(v), v})
		}
		return cs, nil
	}
	switch typeOf(flat, nil) {
	case openapi3.TypeBoolean:
		return []Case{{"true", true}, {"false", false}}, nil
	case openapi3.TypeInteger:
		return g.intBounds(s, flat)
	case openapi3.TypeNumber:
		lo, hi := floatBounds(flat)
		if flat.Format == "float" {
			lo, hi = float32Within(lo, lo, hi), float32Within(hi, lo, hi)
		}
		return g.cases(s, []labelled{
			{"minimum", func() (any, error) { return floatNumber(lo), nil }},
			{"maximum", func() (any, error) { return floatNumber(hi), nil }},
			{"between", func() (any, error) { return g.number(flat), nil }},
		})
	case openapi3.TypeString:
		return g.strBounds(s, flat)
	case openapi3.TypeArray:
		return g.arrayBounds(s, flat, depth)
	case openapi3.TypeObject:
		return g.objectBounds(s, flat, depth)
	}
	return nil, nil
}

// labelled draws the value of one case.
type labelled struct {
	label string
	draw  func() (any, error)
}

// cases draws each case until s accepts it.
func (g *Generator) cases(s *openapi3.Schema, ls []labelled) ([]Case, error) {
	var out []Case
	for _, l := range ls {
		v, err := g.valid(s, l.draw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.label, err)
		}
		out = append(out, Case{l.label, v})
	}
	return out, nil
}

func (g *Generator) intBounds(s, flat *openapi3.Schema) ([]Case, error) {
	lo, hi := IntBounds(flat)
	ls := []labelled{
		{"minimum", func() (any, error) { return intNumber(g.multiple(flat, lo, lo, hi)), nil }},
		{"maximum", func() (any, error) { return intNumber(g.multiple(flat, hi, lo, hi)), nil }},
	}
	if new(big.Int).Sub(hi, lo).Cmp(big.NewInt(2)) >= 0 {
		ls = append(ls, labelled{"between", func() (any, error) {
			inner := g.between(new(big.Int).Add(lo, big.NewInt(1)), new(big.Int).Sub(hi, big.NewInt(1)))
			return intNumber(g.multiple(flat, inner, lo, hi)), nil
		}})
	}
	return g.cases(s, ls)
}

// strBounds are a string's lengths and alphabets; a case that its pattern
// keeps from the characters its label names is left out.
func (g *Generator) strBounds(s, flat *openapi3.Schema) ([]Case, error) {
	if formats[flat.Format] != nil && flat.Pattern == "" {
		return g.cases(s, []labelled{{"format " + flat.Format, func() (any, error) { return g.str(flat, lengthAny, alphaAny) }}})
	}
	type want struct {
		label string
		n     length
		alpha int
		holds func(string) bool // the value is what the label says
	}
	wants := []want{
		{"shortest", lengthShortest, alphaLower, nil},
		{"longest", lengthLongest, alphaLower, nil},
		{"longest, non-ASCII", lengthLongest, alphaBMP, func(v string) bool { return strings.ContainsFunc(v, func(r rune) bool { return r >= 0x80 }) }},
		{"longest, outside the BMP", lengthLongest, alphaAstral, func(v string) bool { return strings.ContainsFunc(v, func(r rune) bool { return r > 0xFFFF }) }},
		{"between, mixed", lengthBetween, alphaMixed, nil},
	}
	var out []Case
	seen := map[string]bool{}
	for _, w := range wants {
		v, err := g.valid(s, func() (any, error) { return g.str(flat, w.n, w.alpha) })
		if err != nil {
			return nil, fmt.Errorf("%s: %w", w.label, err)
		}
		str := v.(string)
		if w.holds != nil && !w.holds(str) || seen[str] {
			continue
		}
		seen[str] = true
		if str == "" {
			w.label = "empty"
		}
		out = append(out, Case{w.label, str})
	}
	return out, nil
}

// arrayBounds: the fewest items, the most (strings at their longest), and
// an array holding each bound of the items.
func (g *Generator) arrayBounds(s, flat *openapi3.Schema, depth int) ([]Case, error) {
	item := itemSchema(flat)
	longest := func() (any, error) {
		if f := Flat(item); f != nil && typeOf(f, nil) == openapi3.TypeString && len(f.Enum) == 0 {
			return g.str(f, lengthLongest, alphaMixed)
		}
		return g.value(item, depth+1)
	}
	cs, err := g.cases(s, []labelled{
		{"fewest items", func() (any, error) { return g.array(flat, itemsFewest, depth) }},
		{"most items", func() (any, error) { return g.arrayOf(flat, itemsMost, depth, longest) }},
	})
	if err != nil || depth >= maxDepth {
		return cs, err
	}
	lo, hi := itemRange(flat)
	if hi < 1 {
		return cs, nil
	}
	inner, err := g.bounds(item, depth+1)
	if err != nil {
		return nil, err
	}
	for _, c := range inner {
		v, err := g.valid(s, func() (any, error) {
			rest, err := g.arrayOf(&openapi3.Schema{MinItems: uint64(max(lo, 1) - 1), MaxItems: ptr(uint64(max(lo, 1) - 1)), UniqueItems: flat.UniqueItems, Items: flat.Items}, itemsFewest, depth,
				func() (any, error) { return g.value(item, depth+1) })
			return append([]any{c.Value}, rest...), err
		})
		if err != nil {
			return nil, fmt.Errorf("item: %s: %w", c.Label, err)
		}
		cs = append(cs, Case{"item: " + c.Label, v})
	}
	return cs, nil
}

func ptr[T any](v T) *T { return &v }

// objectBounds: the required members only, every member, and each member
// at each of its bounds beside the required ones.
func (g *Generator) objectBounds(s, flat *openapi3.Schema, depth int) ([]Case, error) {
	cs, err := g.cases(s, []labelled{
		{"required members", func() (any, error) { return g.object(flat, RequiredMembers, depth) }},
		{"every member", func() (any, error) { return g.object(flat, AllMembers, depth) }},
	})
	if err != nil || depth >= maxDepth {
		return cs, err
	}
	for _, name := range slices.Sorted(maps.Keys(flat.Properties)) {
		ref := flat.Properties[name]
		if ref == nil || ref.Value == nil {
			continue
		}
		inner, err := g.bounds(ref.Value, depth+1)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, c := range inner {
			v, err := g.valid(s, func() (any, error) {
				o, err := g.object(flat, RequiredMembers, depth)
				if err == nil {
					o[name] = c.Value
				}
				return o, err
			})
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", name, c.Label, err)
			}
			cs = append(cs, Case{name + ": " + c.Label, v})
		}
	}
	return cs, nil
}

// alternatives are the schemas of a oneOf or anyOf that stands for its
// schema (no type or members of its own), or nil.
func alternatives(flat *openapi3.Schema) openapi3.SchemaRefs {
	alts := append(slices.Clip(flat.OneOf), flat.AnyOf...)
	if len(alts) == 0 || flat.Type != nil && len(*flat.Type) > 0 || len(flat.Properties) > 0 {
		return nil
	}
	return alts
}

// alternativeBounds are the bounds of each alternative that s accepts (of
// a oneOf, those that validate against one alternative alone), labelled
// by the alternative's place.
func (g *Generator) alternativeBounds(s *openapi3.Schema, alts openapi3.SchemaRefs, depth int) ([]Case, error) {
	var cs []Case
	for i, alt := range alts {
		if alt == nil || alt.Value == nil {
			continue
		}
		inner, err := g.bounds(alt.Value, depth+1)
		if err != nil {
			continue // an alternative nothing satisfies: the others may
		}
		for _, c := range inner {
			if s.VisitJSON(c.Value) == nil {
				cs = append(cs, Case{fmt.Sprintf("alternative %d: %s", i+1, c.Label), c.Value})
			}
		}
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("%w: no alternative of its oneOf or anyOf", ErrUnsatisfiable)
	}
	return cs, nil
}
