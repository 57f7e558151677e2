package schemagen_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"pgregory.net/rapid"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/schemagen"
	"github.com/petstore/petstore/internal/schemagen/schematest"
	"github.com/petstore/petstore/internal/value"
)

// specs are openapi.yaml and openapi.yaml evolved (schematest.Evolve).
func specs(t testing.TB) map[string]*openapi3.T {
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

// schemas are every schema of spec, by where: components, parameters,
// headers, and the bodies of requests and responses.
func schemas(spec *openapi3.T) map[string]*openapi3.Schema {
	out := map[string]*openapi3.Schema{}
	defer func() { // each schema once, under its first name
		seen := map[*openapi3.Schema]bool{}
		for _, where := range slices.Sorted(maps.Keys(out)) {
			if seen[out[where]] {
				delete(out, where)
			}
			seen[out[where]] = true
		}
	}()
	c := spec.Components
	for name, ref := range c.Schemas {
		out["schema "+name] = ref.Value
	}
	for name, ref := range c.Parameters {
		out["parameter "+name] = ref.Value.Schema.Value
	}
	for name, ref := range c.Headers {
		out["header "+name] = ref.Value.Schema.Value
	}
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody != nil {
				out[method+" "+path+" body"] = op.RequestBody.Value.Content.Get("application/json").Schema.Value
			}
			for status, resp := range op.Responses.Map() {
				if mt := resp.Value.Content.Get("application/json"); mt != nil {
					out[method+" "+path+" "+status] = mt.Schema.Value
				}
			}
		}
	}
	return out
}

// valid checks that v, written as JSON and read back with its numbers
// exact, is valid against s, and that its canonical form is the same
// either way.
func valid(t interface {
	Helper()
	Fatalf(string, ...any)
	Fatal(...any)
}, s *openapi3.Schema, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%#v: %v", v, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var back any
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if err := s.VisitJSON(back); err != nil {
		t.Fatalf("%s: invalid: %v", b, err)
	}
	c2, err := value.TextOf(b)
	if c1 := value.Text(v); err != nil || c1 != string(c2) {
		t.Fatalf("%s: canonical %s, read back %s (%v)", b, c1, c2, err)
	}
}

// Every value drawn from every schema of both specs, seed after seed, is
// valid against its schema, and so is every bound.
func TestValuesValidate(t *testing.T) {
	t.Parallel()
	for name, spec := range specs(t) {
		all := schemas(spec)
		for _, where := range slices.Sorted(maps.Keys(all)) {
			s := all[where]
			t.Run(name+"/"+where, func(t *testing.T) {
				t.Parallel()
				for seed := range uint64(100) {
					g := schemagen.New(rand.New(rand.NewPCG(seed, 1)))
					g.Members = schemagen.Members(seed % 3)
					v, err := g.Value(s)
					if err != nil {
						t.Fatalf("seed %d: %v", seed, err)
					}
					valid(t, s, v)
				}
				for seed := range uint64(5) {
					cs, err := schemagen.New(rand.New(rand.NewPCG(seed, 2))).Bounds(s)
					if err != nil {
						t.Fatalf("bounds, seed %d: %v", seed, err)
					}
					for _, c := range cs {
						valid(t, s, c.Value)
					}
				}
			})
		}
	}
}

// The same property with rapid's choices, on the bodies a create sends:
// a failure shrinks to its simplest body.
func TestNewPetValuesValidateRapid(t *testing.T) {
	t.Parallel()
	for name, spec := range specs(t) {
		s := spec.Components.Schemas["NewPet"].Value
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				g := schemagen.New(schematest.Rapid(rt))
				g.Members = schemagen.Members(rapid.IntRange(0, 2).Draw(rt, "members"))
				v, err := g.Value(s)
				if err != nil {
					rt.Fatal(err)
				}
				valid(rt, s, v)
			})
		})
	}
}

// The bounds reach the schema's limits: the longest strings, in
// characters outside the BMP too, the most items, the extremes of int64,
// every member.
func TestBoundsReachTheLimits(t *testing.T) {
	t.Parallel()
	spec, err := schematest.Evolved()
	if err != nil {
		t.Fatal(err)
	}
	c := spec.Components
	bounds := func(s *openapi3.Schema) map[string]any {
		cs, err := schemagen.New(rand.New(rand.NewPCG(7, 7))).Bounds(s)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]any{}
		for _, c := range cs {
			out[c.Label] = c.Value
		}
		return out
	}
	name := bounds(c.Schemas["PetName"].Value)
	for label, want := range map[string]int{"shortest": 1, "longest": 100, "longest, non-ASCII": 100, "longest, outside the BMP": 100} {
		if s, _ := name[label].(string); utf8.RuneCountInString(s) != want {
			t.Errorf("PetName %s: %q, want %d characters", label, s, want)
		}
	}
	if s, _ := name["longest, outside the BMP"].(string); !strings.ContainsFunc(s, func(r rune) bool { return r > 0xFFFF }) {
		t.Errorf("PetName longest, outside the BMP: %q", s)
	}
	cat := bounds(c.Schemas["CategoryId"].Value)
	if cat["minimum"] != json.Number("1") || cat["maximum"] != json.Number("9223372036854775807") {
		t.Errorf("CategoryId: %v", cat)
	}
	key := bounds(c.Parameters["IdempotencyKey"].Value.Schema.Value)
	if s, _ := key["longest"].(string); len(s) != 257 {
		t.Errorf("Idempotency-Key longest: %q, want 257 characters", s)
	}
	pet := bounds(c.Schemas["NewPet"].Value)
	every, _ := pet["every member"].(map[string]any)
	if len(every) != len(c.Schemas["NewPet"].Value.Properties) {
		t.Errorf("NewPet every member: %v", every)
	}
	tagsName := schematest.Name("tags")
	tags, _ := pet[tagsName+": most items"].(map[string]any)
	items, _ := tags[tagsName].([]any)
	if len(items) != 10 {
		t.Errorf("tags: most items: %v", tags)
	}
	for _, it := range items {
		if s, _ := it.(string); utf8.RuneCountInString(s) != 32 {
			t.Errorf("tags: most items: item %q, want 32 characters", s)
		}
	}
	for _, label := range []string{"size: every member", "chip: longest", "born: format date", "weight: maximum", "vaccinated: true", "tags: item: longest, outside the BMP", "status: enum \"sold\""} {
		if !strings.HasPrefix(label, "status") {
			label = schematest.Name(label) // a member Evolve made up
		}
		if _, ok := pet[label]; !ok {
			t.Errorf("NewPet: no case %q in %v", label, slices.Sorted(maps.Keys(pet)))
		}
	}
}

// Strings drawn for a pattern match it, at every length it allows.
func TestPatterns(t *testing.T) {
	t.Parallel()
	for _, p := range []string{
		`^[0-9]{15}$`,
		`^(ISO )?[0-9]{15}$`,
		`^[A-Z][a-z]+( [A-Z][a-z]+)*$`,
		`^("[A-Za-z0-9._~:+/=-]{1,255}"|[A-Za-z0-9._~:+/=-]{1,255})$`,
		`^<` + apitest.Base() + `/pets\?after=[1-9][0-9]{0,18}&limit=[1-9][0-9]{0,2}(&status=(available|pending|sold))?>; rel="next"$`,
		`^[^\u0000-\u001F\u007F-\u009F]+$`,
		`(?i)^abc-[a-f0-9]{4}$`,
		`^\d{4}-\w+\s?\S$`,
		`^.{3,5}$`,
		`colou?r`,
	} {
		min := uint64(0)
		s := &openapi3.Schema{Type: &openapi3.Types{"string"}, Pattern: p, MinLength: min}
		for seed := range uint64(300) {
			v, err := schemagen.New(rand.New(rand.NewPCG(seed, 3))).Value(s)
			if err != nil {
				t.Fatalf("%s, seed %d: %v", p, seed, err)
			}
			valid(t, s, v)
		}
	}
}

// The same seed draws the same values: the kit replays a run from its seed.
func TestSeedReplays(t *testing.T) {
	t.Parallel()
	spec, err := schematest.Evolved()
	if err != nil {
		t.Fatal(err)
	}
	s := spec.Components.Schemas["NewPet"].Value
	draw := func() string {
		g := schemagen.New(rand.New(rand.NewPCG(42, 42)))
		var b strings.Builder
		for range 20 {
			v, err := g.Value(s)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString(value.Text(v))
		}
		cs, _ := g.Bounds(s)
		fmt.Fprint(&b, cs)
		return b.String()
	}
	if a, b := draw(), draw(); a != b {
		t.Errorf("seed 42 drew differently:\n%s\n%s", a, b)
	}
}

// The generator sends only values whose round trip the contract defines
// (package value): every float it draws or bounds is within float32's range
// and keeps its schema's bounds once rounded to a float32; every date-time
// names an instant RFC 3339 writes in UTC.
func TestValuesHaveARoundTrip(t *testing.T) {
	t.Parallel()
	var schemas []*openapi3.Schema
	for _, text := range []string{
		`{"type": "number", "format": "float"}`,
		`{"type": "number", "format": "float", "minimum": 0, "exclusiveMinimum": true, "maximum": 0.1, "exclusiveMaximum": true}`,
		`{"type": "string", "format": "date-time"}`,
		`{"type": "array", "uniqueItems": true, "minItems": 3, "items": {"type": "number", "format": "float", "minimum": 1, "maximum": 1.0000003}}`,
	} {
		var s openapi3.Schema
		if err := json.Unmarshal([]byte(text), &s); err != nil {
			t.Fatal(err)
		}
		schemas = append(schemas, &s)
	}
	check := func(t interface{ Fatalf(string, ...any) }, s *openapi3.Schema, v any) {
		n, err := value.Normalize(value.Copy(v), s)
		if err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		if err := s.VisitJSON(n); err != nil {
			t.Fatalf("%v stored as %v: %v", v, n, err)
		}
	}
	for _, s := range schemas {
		cs, err := schemagen.New(rand.New(rand.NewPCG(1, 2))).Bounds(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			check(t, s, c.Value)
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		s := schemas[rapid.IntRange(0, len(schemas)-1).Draw(rt, "schema")]
		v, err := schemagen.New(schematest.Rapid(rt)).Value(s)
		if errors.Is(err, schemagen.ErrUnsatisfiable) {
			rt.Skip("choices that draw too few distinct items: no value to judge")
		}
		if err != nil {
			rt.Fatalf("%v", err)
		}
		check(rt, s, v)
	})
}

// A nullable member's bounds include null, a value of its own: the kit
// sends it, so that a server that refuses null where the schema allows it
// fails (before, no case of the kit's was null: the plain rival's plant
// refuses-null passed, internal/rival).
func TestBoundsOfNullable(t *testing.T) {
	t.Parallel()
	nick := openapi3.NewStringSchema()
	nick.Nullable = true
	pet := openapi3.NewObjectSchema().WithProperty("name", openapi3.NewStringSchema()).WithPropertyRef("nickname", &openapi3.SchemaRef{Value: nick})
	cs, err := schemagen.New(rand.New(rand.NewPCG(7, 7))).Bounds(pet)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, c := range cs {
		labels = append(labels, c.Label)
		if c.Label == "nickname: null" {
			if m, _ := c.Value.(map[string]any); m == nil || m["nickname"] != nil {
				t.Errorf("nickname: null: %v", c.Value)
			} else if _, ok := m["nickname"]; !ok {
				t.Errorf("nickname: null: sent without the member: %v", c.Value)
			}
		}
		if c.Label == "name: null" {
			t.Errorf("name is not nullable, yet a case sends it null")
		}
	}
	if !slices.Contains(labels, "nickname: null") {
		t.Errorf("no case sends nickname null: %v", labels)
	}
}

// A oneOf's values are each alternative's, at its bounds, each one the
// oneOf accepts (before, the generator took a oneOf for a string and found
// no value: the kit never sent a oneOf member, and the drill's variant l
// found the kit blind to it).
func TestOneOf(t *testing.T) {
	t.Parallel()
	phone := openapi3.NewObjectSchema().WithProperty("phone", openapi3.NewStringSchema()).WithRequired([]string{"phone"})
	email := openapi3.NewObjectSchema().WithProperty("email", openapi3.NewStringSchema()).WithRequired([]string{"email"})
	phone.AdditionalProperties, email.AdditionalProperties = openapi3.AdditionalProperties{Has: ptrTo(false)}, openapi3.AdditionalProperties{Has: ptrTo(false)}
	keeper := &openapi3.Schema{OneOf: openapi3.SchemaRefs{{Value: phone}, {Value: email}}}
	pet := openapi3.NewObjectSchema().WithPropertyRef("keeper", &openapi3.SchemaRef{Value: keeper})
	g := schemagen.New(rand.New(rand.NewPCG(7, 7)))
	cs, err := g.Bounds(pet)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range cs {
		if k, ok := c.Value.(map[string]any)["keeper"].(map[string]any); ok {
			for name := range k {
				seen[name] = true
			}
		}
	}
	if !seen["phone"] || !seen["email"] {
		t.Errorf("the bounds send keeper as %v, want both alternatives", seen)
	}
	for range 20 {
		v, err := g.Value(keeper)
		if err != nil {
			t.Fatal(err)
		}
		if keeper.VisitJSON(v) != nil {
			t.Errorf("%v: not a value of the oneOf", v)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
