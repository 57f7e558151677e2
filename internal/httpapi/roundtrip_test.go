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
	jsonvalue "github.com/petstore/petstore/internal/value"
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
	want, err := jsonvalue.Canonical(body, rt.schema)
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
	if got := jsonvalue.NormalText(jsonvalue.Answered(p, rt.schema)); got != string(want) {
		t.Fatalf("%s:\ngot  %s\nwant %s", label, got, want)
	}
	return id
}

// TestValuesOneMeaning (issue 59, findings 1 and 4): the app on the evolved
// spec stores and answers each value in the one form its schema gives it,
// and a keyed retry that spells the same value otherwise replays the first
// answer: a number is its exact decimal value (1000000000000000000000 is
// 1e21, 9007199254740993.0 is 9007199254740993 and not 9007199254740992), a
// float its float32, a date-time its instant. A float past float32's range
// is refused 400, naming the member.
func TestValuesOneMeaning(t *testing.T) {
	spec := storetest.Specs(t)["evolved"]
	for _, schema := range []string{"NewPet", "Pet"} {
		for name, text := range map[string]string{
			"score": `{"type": "number"}`,
			"ratio": `{"type": "number", "format": "float"}`,
			"seen":  `{"type": "string", "format": "date-time"}`,
		} {
			var m openapi3.Schema
			if err := json.Unmarshal([]byte(text), &m); err != nil {
				t.Fatal(err)
			}
			spec.Components.Schemas[schema].Value.Properties[schematest.Name(name)] = openapi3.NewSchemaRef("", &m)
		}
	}
	rt := newRoundTrip(t, spec, memstore.New())
	for i, tc := range []struct {
		member, first, stored string
		same, other           []string
	}{
		{"score", "1000000000000000000000", "1e+21", []string{"1e21", "1E+21", "10e20", "1000000000000000000000.000"}, []string{"1000000000000000000001"}},
		{"score", "9007199254740993", "9007199254740993", []string{"9007199254740993.0", "90071992547409930e-1"}, []string{"9007199254740992", "9007199254740994"}},
		{"score", "0.1", "0.1", []string{"1e-1", "0.10"}, []string{"0.1000000000000000055511151231257827"}},
		{"ratio", "3.4028234663852886e+38", "3.4028235e+38", []string{"3.4028235e+38", "340282346638528860000000000000000000000"}, []string{"3.4028233e+38"}},
		{"ratio", "0.1", "0.1", []string{"0.100000001", "0.10000000149011612"}, []string{"0.1000001"}},
		{"seen", `"2020-01-01T01:00:00.500+01:00"`, `"2020-01-01T00:00:00.5Z"`, []string{`"2020-01-01T00:00:00.5Z"`, `"2019-12-31T23:00:00.5000-01:00"`, `"2020-01-01T00:00:00.500-00:00"`},
			[]string{`"2020-01-01T00:00:00.5001Z"`}},
	} {
		key := fmt.Sprintf("one-meaning-%d", i)
		body := func(v string) []byte {
			return []byte(apitest.Body(fmt.Sprintf(`{"name":"one-meaning-%d","categoryId":1,%q:%s}`, i, schematest.Name(tc.member), v)))
		}
		first := rt.c.DoBytes(rt.t, "POST", rt.pets, body(tc.first), "Idempotency-Key", key)
		want := fmt.Sprintf(`%q:%s`, schematest.Name(tc.member), tc.stored)
		if first.Status != http.StatusCreated {
			t.Fatalf("%s %s: %d %s, want 201", tc.member, tc.first, first.Status, first.Body)
		}
		if !bytes.Contains(first.Body, []byte(want)) {
			t.Errorf("%s %s: stored and answered as %s, want %s", tc.member, tc.first, first.Body, want)
		}
		for _, v := range tc.same {
			res := rt.c.DoBytes(rt.t, "POST", rt.pets, body(v), "Idempotency-Key", key)
			if res.Status != http.StatusCreated || res.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(res.Body, first.Body) {
				t.Errorf("%s %s, then %s (the same value): %d %s, want the first answer replayed", tc.member, tc.first, v, res.Status, res.Body)
			}
		}
		for _, v := range tc.other {
			if res := rt.c.DoBytes(rt.t, "POST", rt.pets, body(v), "Idempotency-Key", key); res.Status != http.StatusUnprocessableEntity {
				t.Errorf("%s %s, then %s (another value): %d %s, want 422", tc.member, tc.first, v, res.Status, res.Body)
			}
		}
	}
	for _, v := range []string{"3.5e38", "-1e39", "1e400"} {
		ratio := schematest.Name("ratio")
		res := rt.c.DoBytes(rt.t, "POST", rt.pets, []byte(apitest.Body(`{"name":"too-far","categoryId":1,"`+ratio+`":`+v+`}`)))
		if res.Status != http.StatusBadRequest || !bytes.Contains(res.Body, []byte(`"message":"`+ratio+`: `)) {
			t.Errorf("ratio %s: %d %s, want 400 naming ratio", v, res.Status, res.Body)
		}
	}
}
