package newpet_test

import (
	"encoding/json"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/newpet"
	"github.com/petstore/petstore/internal/pets"
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
	s.Properties["care"] = openapi3.NewSchemaRef("", &extra)
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
		{`{"name":"Rex","categoryId":7}`, pets.NewPet{Name: "Rex", CategoryID: 7, Status: "available", Extra: `{"vaccinated":false}`}},
		{`{"vaccinated":true,"name":"Rex","categoryId":7,"status":"sold","tags":["b","a"],"weight":1.50}`,
			pets.NewPet{Name: "Rex", CategoryID: 7, Status: "sold", Extra: `{"tags":["b","a"],"vaccinated":true,"weight":1.5}`}},
		// Defaults inside a member, and an integer beyond int64 where no format bounds it.
		{`{"name":"Rex","categoryId":7,"care":{"big":123456789012345678901234567890}}`,
			pets.NewPet{Name: "Rex", CategoryID: 7, Status: "available", Extra: `{"care":{"big":123456789012345678901234567890,"level":3,"note":"<none>"},"vaccinated":false}`}},
		{`{"name":"Rex","categoryId":7,"tags":[],"size":{"height":2147483647,"unit":"cm"}}`,
			pets.NewPet{Name: "Rex", CategoryID: 7, Status: "available", Extra: `{"size":{"height":2147483647,"unit":"cm"},"tags":[],"vaccinated":false}`}},
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
		`{"name":"Rex","categoryId":1,"size":{"height":1e1,"unit":"cm"}}`,
		`{"name":"Rex","categoryId":1,"size":{"height":2147483648,"unit":"cm"}}`,
		`{"name":"Rex","categoryId":1,"care":{"big":1.0}}`,
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
