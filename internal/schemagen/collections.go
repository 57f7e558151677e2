package schemagen

import (
	"errors"
	"maps"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/value"
)

// The sizes an array may be drawn at.
type items int

const (
	itemsAny    items = iota // any of the others, by the source's choice
	itemsFewest              // minItems
	itemsMost                // maxItems
	itemsSome                // between them
)

// itemRange returns the range of an array schema's sizes; without a
// maxItems, 5 past its minItems.
func itemRange(s *openapi3.Schema) (lo, hi int) {
	lo = int(min(s.MinItems, 1<<12))
	hi = lo + 5
	if s.MaxItems != nil {
		hi = int(min(*s.MaxItems, 1<<12))
	}
	return lo, hi
}

func itemSchema(s *openapi3.Schema) *openapi3.Schema {
	if s.Items == nil || s.Items.Value == nil {
		return &openapi3.Schema{}
	}
	return s.Items.Value
}

// array draws an array of s of the size mode asks, its items drawn from
// the item schema.
func (g *Generator) array(s *openapi3.Schema, mode items, depth int) ([]any, error) {
	item := itemSchema(s)
	return g.arrayOf(s, mode, depth, func() (any, error) { return g.value(item, depth+1) })
}

// arrayOf draws an array of s with items from draw: distinct ones when s
// says uniqueItems (fewer than asked for, down to minItems, when draw runs
// out of new ones).
func (g *Generator) arrayOf(s *openapi3.Schema, mode items, depth int, draw func() (any, error)) ([]any, error) {
	lo, hi := itemRange(s)
	if hi < lo {
		return nil, errors.New("schemagen: maxItems below minItems")
	}
	if mode == itemsAny {
		mode = items(1 + g.pick(3))
	}
	n := lo
	switch {
	case depth >= maxDepth:
	case mode == itemsMost:
		n = hi
	case mode == itemsSome:
		n = lo + g.pick(hi-lo+1)
	}
	out := make([]any, 0, n)
	seen := map[string]bool{}
	for len(out) < n {
		v, ok, err := g.fresh(draw, seen, s.UniqueItems, itemSchema(s))
		if err != nil {
			return nil, err
		}
		if !ok {
			if len(out) >= lo {
				break
			}
			return nil, errors.New("schemagen: too few distinct items for uniqueItems")
		}
		out = append(out, v)
	}
	return out, nil
}

// fresh draws an item of item; with unique, one not in seen, another value
// of item (ok false when none came in a few draws), and adds it.
func (g *Generator) fresh(draw func() (any, error), seen map[string]bool, unique bool, item *openapi3.Schema) (any, bool, error) {
	for range tries {
		v, err := draw()
		if err != nil {
			return nil, false, err
		}
		if !unique {
			return v, true, nil
		}
		c, err := value.Canonical(v, item)
		if err != nil {
			return nil, false, err
		}
		if !seen[string(c)] {
			seen[string(c)] = true
			return v, true, nil
		}
	}
	return nil, false, nil
}

// object draws an object of s: its required members, and its optional
// ones as members says; never a member s does not name.
func (g *Generator) object(s *openapi3.Schema, members Members, depth int) (map[string]any, error) {
	out := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		ref := s.Properties[name]
		if ref == nil || ref.Value == nil {
			continue
		}
		if !slices.Contains(s.Required, name) {
			switch {
			case depth >= maxDepth || members == RequiredMembers:
				continue
			case members == SomeMembers && g.pick(2) == 0:
				continue
			}
		}
		v, err := g.value(ref.Value, depth+1)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}
