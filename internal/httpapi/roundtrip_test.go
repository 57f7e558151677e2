package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"pgregory.net/rapid"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/contract"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/schemagen"
	"github.com/petstore/petstore/internal/schemagen/schematest"
	"github.com/petstore/petstore/internal/storetest"
)

// TestRoundTrip runs the round trip through HTTP on the memory store.
func TestRoundTrip(t *testing.T) {
	RunRoundTrip(t, func(*testing.T) pets.Store { return memstore.New() })
}

// RunRoundTrip: the app built from each spec (openapi.yaml, and the evolved
// one: storetest.Specs) over a store from newStore keeps every member of
// NewPet as sent. For values at each bound of NewPet (schemagen.Bounds)
// and values rapid draws (shrunk on failure), the 201, getPet, a page and
// a replay each answer what was sent, the schema's defaults applied (by
// schemagen, not by the server), every answer checked against that spec;
// the same Idempotency-Key with any one member alone changed is 422,
// unless the change leaves the request the same.
func RunRoundTrip(t *testing.T, newStore func(*testing.T) pets.Store) {
	for name, spec := range storetest.Specs(t) {
		t.Run(name, func(t *testing.T) {
			rt := newRoundTrip(t, spec, newStore(t))
			g := schemagen.New(rand.New(rand.NewPCG(50, 1)))
			cases, err := g.Bounds(rt.schema)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cases {
				rt.check(t, g, c.Value.(map[string]any), c.Label)
			}
			rapid.Check(t, func(r *rapid.T) {
				g := schemagen.New(schematest.Rapid(r))
				v, err := g.Value(rt.schema)
				if err != nil {
					r.Fatalf("%v", err)
				}
				rt.check(r, g, v.(map[string]any), "drawn")
			})
		})
	}
}

// roundTrip is the app of one spec, and what the checks need of it.
type roundTrip struct {
	t      *testing.T // for the contract checks, which report on it
	c      *apitest.Client
	schema *openapi3.Schema
	pets   string // the path of the pets
}

func newRoundTrip(t *testing.T, spec *openapi3.T, store pets.Store) *roundTrip {
	t.Helper()
	app, err := httpapi.New(httpapi.Config{Store: store, Keys: apikey.NewSet(apikey.Hash(testKey)), Spec: spec})
	if err != nil {
		t.Fatalf("httpapi.New: %v", err)
	}
	judge, err := contract.FromServers(spec)
	if err != nil {
		t.Fatal(err)
	}
	base, err := contract.BasePath(spec)
	if err != nil {
		t.Fatal(err)
	}
	return &roundTrip{
		t: t, c: &apitest.Client{Contract: &apitest.Contract{Contract: judge}, Handler: app, Key: testKey},
		schema: storetest.NewPetSchema(t, spec), pets: base + "/pets",
	}
}

var roundTripKeys atomic.Int64

// check creates body under a new key, reads it back every way and sends
// each variant under the same key.
func (rt *roundTrip) check(t storetest.TB, g *schemagen.Generator, body map[string]any, label string) {
	t.Helper()
	want, err := schemagen.Canonical(schemagen.WithDefaults(body, rt.schema))
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	key := fmt.Sprintf("round-trip-%d", roundTripKeys.Add(1))
	sent := rt.post(t, body, key, label)
	if sent.Status != http.StatusCreated || sent.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("%s: POST %s: %d %s, want 201 not replayed", label, rt.mustJSON(t, body), sent.Status, sent.Body)
	}
	id := rt.pet(t, sent.Body, want, label+": 201")
	got := rt.c.Do(rt.t, "GET", fmt.Sprintf("%s/%d", rt.pets, id), "")
	rt.pet(t, got.Body, want, label+": getPet")
	page := rt.c.Do(rt.t, "GET", fmt.Sprintf("%s?after=%d&limit=1", rt.pets, id-1), "")
	var list []json.RawMessage
	if err := json.Unmarshal(page.Body, &list); err != nil || len(list) != 1 {
		t.Fatalf("%s: listPets: %s, %v; want one pet", label, page.Body, err)
	}
	rt.pet(t, list[0], want, label+": listPets")
	again := rt.post(t, body, key, label)
	if again.Status != http.StatusCreated || again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.Body, sent.Body) {
		t.Fatalf("%s: replay: %d %q %s, want 201 replayed %s", label, again.Status, again.Header.Get("Idempotent-Replayed"), again.Body, sent.Body)
	}
	for what, changed := range storetest.Variants(t, g, rt.schema, body) {
		res := rt.post(t, changed, key, label)
		switch same := storetest.Same(rt.schema, body, changed); {
		case same && (res.Status != http.StatusCreated || !bytes.Equal(res.Body, sent.Body)):
			t.Fatalf("%s, %s (the same request): %d %s, want 201 %s", label, what, res.Status, res.Body, sent.Body)
		case !same && res.Status != http.StatusUnprocessableEntity:
			t.Fatalf("%s, %s: %s: %d %s, want 422", label, what, rt.mustJSON(t, changed), res.Status, res.Body)
		}
	}
}

func (rt *roundTrip) post(t storetest.TB, body any, key, label string) apitest.Response {
	t.Helper()
	return rt.c.DoBytes(rt.t, "POST", rt.pets, rt.mustJSON(t, body), "Idempotency-Key", key)
}

func (rt *roundTrip) mustJSON(t storetest.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return b
}

// pet checks that a pet's body is want with an id, and returns the id.
func (rt *roundTrip) pet(t storetest.TB, body []byte, want []byte, label string) int64 {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var p map[string]any
	if err := d.Decode(&p); err != nil {
		t.Fatalf("%s: %s: %v", label, body, err)
	}
	num, _ := p["id"].(json.Number)
	id, err := num.Int64()
	if err != nil {
		t.Fatalf("%s: %s: no id", label, body)
	}
	delete(p, "id")
	if got, err := schemagen.Canonical(p); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s:\ngot  %s\nwant %s", label, got, want)
	}
	return id
}
