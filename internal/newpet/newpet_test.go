package newpet_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/newpet"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/schemagen/schematest"
	"github.com/petstore/petstore/internal/storetest"
	"github.com/petstore/petstore/internal/strict"
)

// schema is the evolved NewPet with one more member: an object whose
// members have defaults, and an integer without a format.
func schema(t *testing.T) *openapi3.Schema {
	t.Helper()
	s := storetest.NewPetSchema(t, storetest.Specs(t)["evolved"])
	var extra openapi3.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{
		"level":{"type":"integer","default":3},
		"note":{"type":"string","default":"<none>"},
		"big":{"type":"integer"}}}`), &extra); err != nil {
		t.Fatal(err)
	}
	s.Properties[schematest.Name("care")] = openapi3.NewSchemaRef("", &extra)
	return s
}

func TestNewPet(t *testing.T) {
	m, err := newpet.New(schema(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		body string
		want pets.NewPet
	}{
		// Plain, what the fingerprint hashes, leaves the members at their
		// defaults out: "{}" when that leaves none.
		{`{"name":"Rex","categoryId":7}`, pets.NewPet{Name: "Rex", CategoryID: 7, Status: "available", Extra: made(`{"vaccinated":false}`), Plain: `{}`}},
		{schematest.Made(`{"vaccinated":true,"name":"Rex","categoryId":7,"status":"sold","tags":["b","a"],"weight":1.50}`),
			pets.NewPet{Name: "Rex", CategoryID: 7, Status: "sold", Extra: made(`{"tags":["b","a"],"vaccinated":true,"weight":1.5}`), Plain: made(`{"tags":["b","a"],"vaccinated":true,"weight":1.5}`)}},
		// Defaults inside a member, and an integer beyond int64 where no format bounds it.
		{schematest.Made(`{"name":"Rex","categoryId":7,"care":{"big":123456789012345678901234567890}}`),
			pets.NewPet{Name: "Rex", CategoryID: 7, Status: "available", Extra: made(`{"care":{"big":123456789012345678901234567890,"level":3,"note":"<none>"},"vaccinated":false}`),
				Plain: made(`{"care":{"big":123456789012345678901234567890}}`)}},
		{schematest.Made(`{"name":"Rex","categoryId":7,"care":{"level":3,"note":"n"},"vaccinated":false}`),
			pets.NewPet{Name: "Rex", CategoryID: 7, Status: "available", Extra: made(`{"care":{"level":3,"note":"n"},"vaccinated":false}`), Plain: made(`{"care":{"note":"n"}}`)}},
		{schematest.Made(`{"name":"Rex","categoryId":7,"tags":[],"size":{"height":2147483647,"unit":"cm"}}`),
			pets.NewPet{Name: "Rex", CategoryID: 7, Status: "available", Extra: made(`{"size":{"height":2147483647,"unit":"cm"},"tags":[],"vaccinated":false}`),
				Plain: made(`{"size":{"height":2147483647,"unit":"cm"},"tags":[]}`)}},
		// A double's value as its shortest digits.
		{schematest.Made(`{"name":"Rex","categoryId":7,"weight":0.1000000000000000055511151231257827}`),
			pets.NewPet{Name: "Rex", CategoryID: 7, Status: "available", Extra: made(`{"vaccinated":false,"weight":0.1}`), Plain: made(`{"weight":0.1}`)}},
	} {
		body, err := strict.DecodeJSON([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.NewPet(body)
		if err != nil || got != tc.want {
			t.Errorf("%s:\ngot  %+v, %v\nwant %+v", tc.body, got, err, tc.want)
		}
	}
	// Integers to the letter, at any depth, within their format.
	for _, body := range []string{
		`{"name":"Rex","categoryId":7.0}`,
		`{"name":"Rex","categoryId":9223372036854775808}`,
		schematest.Made(`{"name":"Rex","categoryId":1,"size":{"height":1e1,"unit":"cm"}}`),
		schematest.Made(`{"name":"Rex","categoryId":1,"size":{"height":2147483648,"unit":"cm"}}`),
		schematest.Made(`{"name":"Rex","categoryId":1,"care":{"big":1.0}}`),
		schematest.Made(`{"name":"Rex","categoryId":1,"weight":1e400}`),
	} {
		v, err := strict.DecodeJSON([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := m.NewPet(v); err == nil {
			t.Errorf("%s: got %+v, want an error", body, got)
		}
	}
}

// withLevel is the evolved NewPet with a member care whose member level has
// the default given ("" for none).
func withLevel(t *testing.T, def string) *openapi3.Schema {
	t.Helper()
	s := storetest.NewPetSchema(t, storetest.Specs(t)["evolved"])
	level := `{"type":"integer"}`
	if def != "" {
		level = `{"type":"integer","default":` + def + `}`
	}
	var care openapi3.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"level":`+level+`,"note":{"type":"string"}}}`), &care); err != nil {
		t.Fatal(err)
	}
	s.Properties[schematest.Name("care")] = openapi3.NewSchemaRef("", &care)
	return s
}

// TestFingerprintKeptByANestedDefault (issue 59, finding 5): a default
// added to the spec later inside a member leaves the fingerprint of a
// request that left the member's member out as it was, as Fingerprint
// promises: the outcome kept before the upgrade replays after it. The pet
// is stored with the default after the upgrade.
func TestFingerprintKeptByANestedDefault(t *testing.T) {
	before, err := newpet.New(withLevel(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	after, err := newpet.New(withLevel(t, "3"))
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		schematest.Made(`{"name":"Rex","categoryId":7,"care":{}}`),
		schematest.Made(`{"name":"Rex","categoryId":7,"care":{"note":"n"},"tags":["a"]}`),
		schematest.Made(`{"name":"Rex","categoryId":7,"care":{},"vaccinated":false}`),
	} {
		var n [2]pets.NewPet
		for i, m := range []*newpet.Mapper{before, after} {
			v, err := strict.DecodeJSON([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			if n[i], err = m.NewPet(v); err != nil {
				t.Fatal(err)
			}
			if n[i], err = n[i].Normalize(); err != nil {
				t.Fatal(err)
			}
		}
		if !strings.Contains(string(n[1].Extra), `"level":3`) {
			t.Errorf("%s after: stored as %s, without the default", body, n[1].Extra)
		}
		if n[0].Fingerprint() != n[1].Fingerprint() {
			t.Errorf("%s: the fingerprint changed with a nested default added (%s, then %s)", body, n[0].Extra, n[1].Extra)
		}
	}
}

// BenchmarkNewPet maps openapi.yaml's create bodies, the status given and
// left out: the server's work per create, beside the validator's.
func BenchmarkNewPet(b *testing.B) {
	m, err := newpet.New(storetest.NewPetSchema(b, storetest.Specs(b)["openapi.yaml"]))
	if err != nil {
		b.Fatal(err)
	}
	for _, body := range []string{`{"name":"Rex","categoryId":7,"status":"pending"}`, `{"name":"Rex","categoryId":7}`} {
		data := []byte(body)
		b.Run(map[bool]string{true: "status", false: "default"}[strings.Contains(body, "status")], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v, _ := strict.DecodeJSON(data)
				if _, err := m.NewPet(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// made is schematest.Made as an Extra.
func made(text string) pets.Extra { return pets.Extra(schematest.Made(text)) }
