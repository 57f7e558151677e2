package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
	n, missing := extraBytes(newPet, &names)
	var got []string
	for _, u := range missing {
		got = append(got, u.String())
	}
	// Every one at once: a date and a date-time are strings without
	// maxLength, and a number without a format is kept exactly.
	want := []string{"/" + schematest.Name("born") + ": no maxLength", "/" + schematest.Name("score") + ": a number without format float or double (kept exactly, however many its digits)", "/" + schematest.Name("seen") + ": no maxLength"}
	if n != -1 || !slices.Equal(got, want) {
		t.Errorf("evolved: %d %q, want -1 and %q", n, got, want)
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
	n, missing = extraBytes(s, &names)
	// {"chip":19*6+2,"size":{"height":4,"unit":4},"tags":[10*(32*6+2)+9],"vaccinated":5,"weight":24}
	wantN := 2 + 4 + (len(`"chip":`) + 116) + (len(`"size":`) + 2 + 1 + len(`"height":`) + 4 + len(`"unit":`) + 4) +
		(len(`"tags":`) + 2 + 10*194 + 9) + (len(`"vaccinated":`) + 5) + (len(`"weight":`) + 24)
	if n != wantN || missing != nil || strings.Join(names, ",") != "chip,size,tags,vaccinated,weight" {
		t.Errorf("got %d %v %v, want %d", n, missing, names, wantN)
	}
}

// TestUnboundedRefused: a spec that leaves members unbounded fails the
// command (make generate), naming every such member, where in it, and the
// bound to add, in one message, and writes nothing; the same spec with
// the bounds added is generated.
func TestUnboundedRefused(t *testing.T) {
	members := map[string]string{
		"color":  `{"type": "string", "pattern": "^[a-z]+$"}`,
		"tags":   `{"type": "array", "items": {"type": "string"}}`,
		"size":   `{"type": "object", "additionalProperties": false, "properties": {"height": {"type": "integer"}}}`,
		"chosen": `{"type": "string", "maxLength": 8}`,
	}
	dir := t.TempDir()
	spec := writeSpec(t, dir, members)
	out := filepath.Join(dir, "shape.go")
	err := run(spec, out)
	if err == nil {
		t.Fatal("a spec with unbounded members was generated")
	}
	msg := err.Error()
	for _, want := range []string{
		"NewPet leaves 3 members of a pet unbounded",
		"\n  color: no maxLength; fix: add maxLength",
		"\n  size at /size/height: no minimum and maximum (or integer format); fix: add minimum and maximum",
		"\n  tags: no maxItems; fix: add maxItems",
		"\n  tags at /tags/items: no maxLength; fix: add maxLength",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "chosen") {
		t.Errorf("the message names a bounded member:\n%s", msg)
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("refused, yet %s was written (%v)", out, err)
	}

	members["color"] = `{"type": "string", "pattern": "^[a-z]+$", "maxLength": 20}`
	members["tags"] = `{"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 10}}`
	members["size"] = `{"type": "object", "additionalProperties": false, "properties": {"height": {"type": "integer", "format": "int32"}}}`
	if err := run(writeSpec(t, dir, members), out); err != nil {
		t.Errorf("bounded: %v", err)
	}
}

// writeSpec writes testdata/facts.yaml with members added to NewPet, as
// JSON, in a new file in dir, and returns its path.
func writeSpec(t *testing.T, dir string, members map[string]string) string {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile("testdata/facts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	props := doc.Components.Schemas["NewPet"].Value.Properties
	for name, text := range members {
		var s openapi3.Schema
		if err := json.Unmarshal([]byte(text), &s); err != nil {
			t.Fatal(err)
		}
		props[name] = openapi3.NewSchemaRef("", &s)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	// A file of its own each time: kin-openapi's loader caches what it
	// read by path, for the process.
	f, err := os.CreateTemp(dir, "openapi-*.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}
