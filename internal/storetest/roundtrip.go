package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"pgregory.net/rapid"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/newpet"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/schemagen"
	"github.com/petstore/petstore/internal/schemagen/schematest"
	"github.com/petstore/petstore/internal/value"
)

// Specs are the specs the round trips run on: openapi.yaml, and
// openapi.yaml evolved with members of every kind a data member may be
// (schematest.Evolve: an array of distinct strings, an object, a string
// with a pattern, a date, a number, a boolean with a default), which
// today's spec does not have.
func Specs(t testing.TB) map[string]*openapi3.T {
	t.Helper()
	spec, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	evolved, err := schematest.Evolved()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*openapi3.T{"openapi.yaml": spec, "evolved": evolved}
}

// NewPetSchema is spec's NewPet.
func NewPetSchema(t testing.TB, spec *openapi3.T) *openapi3.Schema {
	t.Helper()
	ref := spec.Components.Schemas["NewPet"]
	if ref == nil || ref.Value == nil {
		t.Fatal("the spec has no NewPet")
	}
	return ref.Value
}

// TB is what a round trip needs of *testing.T and *rapid.T.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Variants are body with each member alone changed: given another value
// its schema allows (drawn from g until it differs), added when body lacks
// it, and removed when it is optional and there. Each is labelled.
func Variants(t TB, g *schemagen.Generator, schema *openapi3.Schema, body map[string]any) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(schema.Properties)) {
		prop := schema.Properties[name].Value
		old, had := body[name]
		for range 32 {
			v, err := g.Value(prop)
			if err != nil {
				t.Fatalf("member %s: %v", name, err)
			}
			if had && value.Equal(v, old, prop) {
				continue
			}
			changed := value.Copy(body).(map[string]any)
			changed[name] = v
			out[name+" changed"] = changed
			break
		}
		if had && !slices.Contains(schema.Required, name) {
			removed := value.Copy(body).(map[string]any)
			delete(removed, name)
			out[name+" removed"] = removed
		}
	}
	return out
}

// Same reports whether two bodies are the same request: the same value of
// the schema (package value, which the server's mapping uses too: what
// this oracle checks is that the stores keep what it made, each member
// whole, and that a request's fingerprint tells what it says apart).
func Same(schema *openapi3.Schema, a, b any) bool {
	return value.Equal(a, b, schema)
}

// keys numbers the idempotency keys of the round trips.
var keys atomic.Int64

// testRoundTrip: every member a NewPet allows, openapi.yaml's and the
// evolved spec's, at each of its bounds (schemagen.Bounds) and as rapid
// draws them (shrunk on failure), is kept as sent: Create's answer, Get, a
// page (filtered and not) and a replay under the same key each equal the
// normalized NewPet; a request with any one member alone changed under
// that key is ErrKeyReused, unless the change leaves it the same request.
func testRoundTrip(t *testing.T, s pets.Store) {
	for name, spec := range Specs(t) {
		t.Run(name, func(t *testing.T) {
			schema := NewPetSchema(t, spec)
			m, err := newpet.New(schema)
			if err != nil {
				t.Fatal(err)
			}
			g := schemagen.New(rand.New(rand.NewPCG(50, 3)))
			cases, err := g.Bounds(schema)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cases {
				roundTrip(t, s, m, g, schema, c.Value, c.Label)
			}
			rapid.Check(t, func(rt *rapid.T) {
				g := schemagen.New(schematest.Rapid(rt))
				v, err := g.Value(schema)
				if err != nil {
					rt.Fatalf("%v", err)
				}
				roundTrip(rt, s, m, g, schema, v, "drawn")
			})
		})
	}
}

// roundTrip creates body once under a new key and reads it back every way.
func roundTrip(t TB, s pets.Store, m *newpet.Mapper, g *schemagen.Generator, schema *openapi3.Schema, body any, label string) {
	t.Helper()
	ctx := context.Background()
	obj, _ := body.(map[string]any)
	n := mapBody(t, m, obj, label)
	k := key(fmt.Sprintf("round-trip-%d", keys.Add(1)))
	p, replayed, err := s.CreateOnce(ctx, n, k)
	if err != nil || replayed {
		t.Fatalf("%s: CreateOnce(%+v): %+v, replayed %v, %v", label, n, p, replayed, err)
	}
	want := n.WithID(p.ID)
	if p != want {
		t.Fatalf("%s: created %+v, want %+v", label, p, want)
	}
	if got, err := s.Get(ctx, p.ID); err != nil || got != want {
		t.Fatalf("%s: Get: %+v, %v; want %+v", label, got, err, want)
	}
	for _, q := range []pets.Query{{After: p.ID - 1, Limit: 1}, {After: p.ID - 1, Status: p.Status, Limit: 1}} {
		page, err := s.List(ctx, q)
		if err != nil || len(page.Pets) != 1 || page.Pets[0] != want {
			t.Fatalf("%s: List(%+v): %+v, %v; want [%+v]", label, q, page.Pets, err, want)
		}
	}
	if got, replayed, err := s.CreateOnce(ctx, n, k); err != nil || !replayed || got != want {
		t.Fatalf("%s: replay: %+v, replayed %v, %v; want %+v", label, got, replayed, err, want)
	}
	for what, changed := range Variants(t, g, schema, obj) {
		got, replayed, err := s.CreateOnce(ctx, mapBody(t, m, changed, label+", "+what), k)
		switch {
		case Same(schema, obj, changed):
			if err != nil || !replayed || got != want {
				t.Fatalf("%s, %s (the same request): %+v, replayed %v, %v; want %+v replayed", label, what, got, replayed, err, want)
			}
		case !errors.Is(err, pets.ErrKeyReused):
			t.Fatalf("%s, %s: %+v, replayed %v, %v; want ErrKeyReused", label, what, got, replayed, err)
		}
	}
}

// mapBody is the normalized NewPet of a body.
func mapBody(t TB, m *newpet.Mapper, body map[string]any, label string) pets.NewPet {
	t.Helper()
	n, err := m.NewPet(value.Copy(body))
	if err == nil {
		n, err = n.Normalize()
	}
	if err != nil {
		t.Fatalf("%s: %v: %v", label, body, err)
	}
	return n
}
