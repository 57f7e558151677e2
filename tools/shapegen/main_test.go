package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/schemagen/schematest"
	"github.com/petstore/petstore/internal/storetest"
)

// TestFacts: the facts of 1.2.0's spec (testdata/facts.yaml, frozen), as
// the code used to mirror them by hand; and the repository's openapi.yaml,
// whatever it says today (a member or a status added is no failure),
// gives facts that render.
func TestFacts(t *testing.T) {
	fixture, err := openapi3.NewLoader().LoadFromFile("testdata/facts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := factsOf(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Statuses) != 3 || f.DefaultStatus != "available" || f.MaxName != 100 || f.MaxLimit != 100 || f.DefaultLimit != 20 ||
		f.MaxNameBytes != 400 || f.MaxExtraBytes != 0 || len(f.Extra) != 0 {
		t.Errorf("got %+v", f)
	}
	for name, spec := range storetest.Specs(t) {
		f, err := factsOf(spec)
		if err == nil {
			_, err = render(f)
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestExtraBytes: the most bytes of the evolved members in canonical JSON,
// and an unbounded member reported as such, where it is.
func TestExtraBytes(t *testing.T) {
	newPet := storetest.NewPetSchema(t, storetest.Specs(t)["evolved"])
	var names []string
	if n, where := extraBytes(newPet, &names); n != -1 || where != "/"+schematest.Name("born")+": no maxLength" {
		t.Errorf("evolved: %d %q, want -1 and /%s", n, where, schematest.Name("born"))
	}
	bounded := map[string]string{}
	for _, name := range []string{"tags", "size", "chip", "weight", "vaccinated"} {
		bounded[name] = schematest.Members[name]
	}
	s := &openapi3.Schema{Properties: openapi3.Schemas{}, AdditionalProperties: openapi3.AdditionalProperties{Has: new(bool)}}
	for name, text := range bounded {
		var m openapi3.Schema
		if err := json.Unmarshal([]byte(text), &m); err != nil {
			t.Fatal(err)
		}
		s.Properties[name] = openapi3.NewSchemaRef("", &m)
	}
	names = nil
	n, where := extraBytes(s, &names)
	// {"chip":19*6+2,"size":{"height":4,"unit":4},"tags":[10*(32*6+2)+9],"vaccinated":5,"weight":24}
	want := 2 + 4 + (len(`"chip":`) + 116) + (len(`"size":`) + 2 + 1 + len(`"height":`) + 4 + len(`"unit":`) + 4) +
		(len(`"tags":`) + 2 + 10*194 + 9) + (len(`"vaccinated":`) + 5) + (len(`"weight":`) + 24)
	if n != want || where != "" || strings.Join(names, ",") != "chip,size,tags,vaccinated,weight" {
		t.Errorf("got %d %q %v, want %d", n, where, names, want)
	}
}
