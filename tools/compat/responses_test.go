package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// closed gives the schema name of d additionalProperties: false.
func closed(d *openapi3.T, name string) {
	d.Components.Schemas[name].Value.AdditionalProperties = openapi3.AdditionalProperties{Has: ptr(false)}
}

func addMember(d *openapi3.T, schema, member string, required bool, s *openapi3.Schema) {
	v := d.Components.Schemas[schema].Value
	v.Properties[member] = openapi3.NewSchemaRef("", s)
	if required {
		v.Required = append(v.Required, member)
	}
}

// The gate's verdicts on open response objects and closed request bodies
// (docs/evolving-the-contract.md#open-responses-closed-requests), each from
// the repository's contract (realSpec, Pet and Error open, NewPet closed)
// or a release of it with Pet closed: the raise the change needs, the
// words that name it, and whether it is refused in every version.
func TestOpenResponses(t *testing.T) {
	owner := func() *openapi3.Schema {
		s := openapi3.NewObjectSchema().WithProperty("name", openapi3.NewStringSchema())
		s.AdditionalProperties = openapi3.AdditionalProperties{Has: ptr(false)}
		return s
	}
	for _, tc := range []struct {
		name    string
		release func(*openapi3.T) // the release, from the contract; nil: the contract
		change  func(*openapi3.T)
		want    Raise
		names   string // oasdiff sees no additionalProperties: closing is wording to it
		refused bool   // in every version, however raised
	}{
		{"Pet and Error opened", func(d *openapi3.T) { closed(d, "Pet"); closed(d, "Error") }, func(*openapi3.T) {},
			Minor, "the schema `Pet` is open", false},
		{"Pet closed again", nil, func(d *openapi3.T) { closed(d, "Pet") },
			Patch, "the schema `Pet` is a closed response object", true},
		{"an answer's Error schema closed again", nil, func(d *openapi3.T) { closed(d, "ErrorRateLimited") },
			Patch, "the schema `ErrorRateLimited` is a closed response object", true},
		{"a new closed object in a response", nil, func(d *openapi3.T) { addMember(d, "Pet", "owner", false, owner()) },
			Minor, "the object at `components.schemas.Pet owner` is a closed response object", true},
		{"a new required member of the open Pet", nil, func(d *openapi3.T) { addMember(d, "Pet", "breed", true, openapi3.NewStringSchema()) },
			Minor, "added the required property `breed`", false},
		{"a new optional member of the open Pet", nil, func(d *openapi3.T) { addMember(d, "Pet", "breed", false, openapi3.NewStringSchema()) },
			Minor, "added the optional property `breed`", false},
		{"a new required member of Pet closed in the release and still", func(d *openapi3.T) { closed(d, "Pet") }, func(d *openapi3.T) {
			closed(d, "Pet")
			addMember(d, "Pet", "breed", true, openapi3.NewStringSchema())
		}, Major, "added the member `breed` to the schema `Pet`, a closed response object", false},
		{"a new optional member of Pet closed in the release and still", func(d *openapi3.T) { closed(d, "Pet") }, func(d *openapi3.T) {
			closed(d, "Pet")
			addMember(d, "Pet", "breed", false, openapi3.NewStringSchema())
		}, Major, "added the member `breed` to the schema `Pet`, a closed response object", false},
		{"a new optional member of the closed NewPet", nil, func(d *openapi3.T) { addMember(d, "NewPet", "breed", false, openapi3.NewStringSchema()) },
			Minor, "added the new optional request property `breed`", false},
		{"a new required member of the closed NewPet", nil, func(d *openapi3.T) { addMember(d, "NewPet", "breed", true, openapi3.NewStringSchema()) },
			Major, "added the new required request property `breed`", false},
		{"a closed object shared by NewPet and Pet", nil, func(d *openapi3.T) {
			d.Components.Schemas["Owner"] = openapi3.NewSchemaRef("", owner())
			for _, s := range []string{"NewPet", "Pet"} {
				d.Components.Schemas[s].Value.Properties["owner"] = openapi3.NewSchemaRef("#/components/schemas/Owner", d.Components.Schemas["Owner"].Value)
			}
		}, Minor, "owner", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := realSpec(t)
			doc := loadDoc(t, base)
			tc.change(doc)
			if tc.release != nil {
				rel := loadDoc(t, base)
				tc.release(rel)
				base = marshal(t, rel)
			}
			r := compare(t, base, doc)
			text := strings.Join(r.Problems, "\n")
			for _, c := range r.Changes {
				text += "\n" + c.String()
			}
			if r.Required != tc.want || !strings.Contains(text, tc.names) {
				t.Fatalf("got a %s raise, want %s, and a text naming %q:\n%s", r.Required, tc.want, tc.names, text)
			}
			// Under the smallest version that carries it, and its base
			// path: accepted, or refused still.
			v, _ := parseVersion(doc.Info.Version)
			next := v.next(max(tc.want, Patch))
			doc.Info.Version = next.String()
			data := marshal(t, doc)
			if tc.want == Major {
				data = movedTo(t, doc, "/v2")
			}
			r = compareData(t, base, data)
			if r.OK() == tc.refused {
				t.Errorf("under %s: ok %v, want %v (problems %v %v)", next, r.OK(), !tc.refused, r.Problems, r.Leftovers)
			}
			if tc.refused {
				doc.Info.Version = v.next(Major).String()
				if r := compareData(t, base, movedTo(t, doc, "/v2")); r.OK() {
					t.Errorf("under %s: ok, want refused in every version", doc.Info.Version)
				}
			}
		})
	}
}

func marshal(t *testing.T, doc *openapi3.T) []byte {
	t.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
