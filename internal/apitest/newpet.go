package apitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/schemagen"
)

// A test writes the members of a create it is about; the spec under test
// (the embedded one) gives the rest: a member the spec makes required,
// at a new major, needs no edit of any test.

// simplest is a schemagen.Source that always makes the simplest choice.
type simplest struct{}

func (simplest) IntN(int) int { return 0 }

// smallest is the smallest valid value of each schema of the embedded
// spec that a test asks for, as members, by the schema's name.
var smallest sync.Map

func mustSmallest(schema string) map[string]json.RawMessage {
	if m, ok := smallest.Load(schema); ok {
		return m.(map[string]json.RawMessage)
	}
	m, err := smallestOf(schema)
	if err != nil {
		panic(err) // the embedded spec is generated and validated by make generate
	}
	smallest.Store(schema, m)
	return m
}

func smallestOf(schema string) (map[string]json.RawMessage, error) {
	doc, err := gen.GetSpec()
	if err != nil {
		return nil, err
	}
	ref := doc.Components.Schemas[schema]
	if ref == nil || ref.Value == nil {
		return nil, fmt.Errorf("apitest: the embedded spec has no %s", schema)
	}
	g := schemagen.New(simplest{})
	g.Members = schemagen.RequiredMembers
	v, err := g.Value(ref.Value)
	if err != nil {
		return nil, fmt.Errorf("apitest: the smallest %s: %w", schema, err)
	}
	out := map[string]json.RawMessage{}
	for name, m := range v.(map[string]any) {
		if out[name], err = json.Marshal(m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// NewPet returns the smallest valid NewPet of the spec, in JSON: its
// required members only, each at the simplest value its schema allows.
func NewPet() string { return Body(`{}`) }

// Required returns the names of the members NewPet requires, sorted.
func Required() []string { return slices.Sorted(maps.Keys(mustSmallest("NewPet"))) }

// Body returns text, a JSON object a test wrote, with every member the
// spec's NewPet requires and text lacks added at its value in NewPet();
// the members text gives are kept as written, in its order. A text that
// is not a JSON object is returned as it is.
func Body(text string) string { return Fill("NewPet", text) }

// PetJSON is Body for the spec's Pet: a pet an answer carries, as a test
// writes one, with the members Pet requires that it lacks.
func PetJSON(text string) string { return Fill("Pet", text) }

// Fill is Body for the spec's schema of that name.
func Fill(schema, text string) string {
	var given map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &given) != nil || given == nil {
		return text
	}
	least := mustSmallest(schema)
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(least)) {
		if _, ok := given[name]; ok {
			continue
		}
		fmt.Fprintf(&b, `,%q:%s`, name, least[name])
	}
	if b.Len() == 0 {
		return text
	}
	t := strings.TrimRight(text, " \t\r\n")
	rest := text[len(t):] // white space after the object, kept
	t = strings.TrimSuffix(t, "}")
	if len(given) == 0 {
		return t + strings.TrimPrefix(b.String(), ",") + "}" + rest
	}
	return t + b.String() + "}" + rest
}

// Without returns Body(text) without the members names: a body the spec
// refuses for lacking them alone.
func Without(text string, names ...string) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(Body(text)), &m); err != nil {
		panic(fmt.Sprintf("apitest: Without(%s): %v", text, err))
	}
	for _, n := range names {
		delete(m, n)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(m)
	return strings.TrimSpace(buf.String())
}

// Extra returns, as JSON, the members the spec's NewPet requires beside
// the typed ones (name, categoryId, status), at their simplest values; ""
// for none: the pets.Extra of a pet a test puts in a store directly.
func Extra() string {
	m := maps.Clone(mustSmallest("NewPet"))
	for _, typed := range []string{"name", "categoryId", "status"} {
		delete(m, typed)
	}
	if len(m) == 0 {
		return ""
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}
