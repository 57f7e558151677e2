package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A variant is one change of issue 50's drill: the edit of openapi.yaml,
// what a create sends to show that both stores keep it, and the raise the
// gate must name for it. Several variants' letters together ("abcd") name
// their changes made together.
type variant struct {
	ID, Name string
	// Members are the members of NewPet and Pet the change concerns, and
	// what a create sends in each.
	Members []member
	// Raise is the version raise the gate must name: "minor" or "major".
	Raise string
	// Filter is a query of listPets that must find the pet (a status).
	Filter string
	// Op is the operation the change adds, with the implementation the
	// drill brings for it; nil for a change of data alone.
	Op *operation
	// Required are the members the change makes required: left out, a
	// create is invalid (400), not another request under its key (422).
	Required []string
	edit     func(spec []byte) ([]byte, error)
}

// operation is an operation a variant adds to the spec, and what the
// drill brings for it: the hand-written code a person writes beside the
// spec (Code, a patch applied after make generate; every file it touches
// must be one implementation allows), and a planted defect over that code
// that makes the operation a no-op (Plant), which the tests of
// PlantPackages must fail, naming ID.
type operation struct {
	ID, Method, Path string // the operationId, and where it is
	Code, Plant      string // patches, from the repository's root
	PlantPackages    []string
	// KitJudges says that the kit must judge the operation: fail a check
	// through drill blind, which answers it done without doing it, that it
	// passes through drill relay, naming the operation. Without it (an
	// operation no rule of the kit's method_semantics covers), the drill
	// only notes that the kit does not.
	KitJudges bool
}

// implementation is what the code of an added operation may touch: the
// handler the compiler asks for, the store method it needs (the interface
// and both stores) and a migration; any other file that had to change
// means the operation did not follow from the spec alone.
var implementation = []struct{ glob, what string }{
	{"internal/httpapi/handlers.go", "the handler"},
	{"internal/pets/pets.go", "the store interface"},
	{"internal/memstore/*.go", "the memory store"},
	{"internal/pgstore/*.go", "the PostgreSQL store"},
	{"internal/pgstore/migrations/*.sql", "a migration"},
}

// member is a member a create sends, and its value as JSON.
type member struct{ Name, Value string }

// tagsSchema is variant b's member, the worked example of
// docs/evolving-the-contract.md, which shows it (TestDocShowsTheEdit).
const tagsSchema = `type: array
description: Words to find the animal by, each once, in the order given.
maxItems: 10
uniqueItems: true
items:
  type: string
  minLength: 1
  maxLength: 32
`

var variants = []variant{
	{
		ID: "a", Name: "pattern", Members: []member{{"chip", `"985112345678901"`}}, Raise: "minor",
		edit: func(spec []byte) ([]byte, error) {
			return memberEdit(spec, "chip", `
type: string
description: The number of the animal's microchip (ISO 11784), 15 digits.
pattern: '^[0-9]{15}$'
maxLength: 15
`, nil)
		},
	},
	{
		// Out of order, one character outside the BMP: kept as sent, neither
		// sorted nor re-encoded.
		ID: "b", Name: "array", Members: []member{{"tags", `["zeta","🐕 dog","alpha"]`}}, Raise: "minor",
		edit: func(spec []byte) ([]byte, error) {
			return memberEdit(spec, "tags", tagsSchema, nil)
		},
	},
	{
		// Members out of the canonical order, the largest height.
		ID: "c", Name: "object", Members: []member{{"size", `{"unit":"in","height":1000}`}}, Raise: "minor",
		edit: func(spec []byte) ([]byte, error) {
			return memberEdit(spec, "size", `$ref: '#/components/schemas/Size'`, map[string]string{"Size": `
type: object
description: How tall the animal stands.
additionalProperties: false
required: [height, unit]
properties:
  height:
    type: integer
    format: int32
    minimum: 1
    maximum: 1000
  unit:
    type: string
    enum: [cm, in]
`})
		},
	},
	{
		ID: "d", Name: "enum", Members: []member{{"status", `"reserved"`}}, Raise: "major", Filter: "status=reserved",
		edit: func(spec []byte) ([]byte, error) { return enumEdit(spec, "PetStatus", "reserved") },
	},
	{
		// An operation, and its code: docs/evolving-the-contract.md's
		// "what needs code" for one.
		ID: "e", Name: "delete", Raise: "minor",
		Op: &operation{
			ID: "deletePet", Method: "DELETE", Path: "/pets/{petId}",
			Code: "tools/drill/testdata/e/implement.patch", Plant: "tools/drill/testdata/e/noop.patch",
			PlantPackages: []string{"./internal/memstore", "./internal/storemetrics"},
			KitJudges:     true, // method_semantics: after a DELETE, a GET is 404 or 410
		},
		edit: func(spec []byte) ([]byte, error) { return operationEdit(spec, "/pets/{petId}", "delete", deletePet) },
	},
	{
		// A required request member: a major raise (make new-major), and
		// every test's body still valid, as the spec's smallest NewPet
		// (apitest.Body) gives it.
		ID: "f", Name: "required", Members: []member{{"species", `"dog"`}}, Raise: "major", Required: []string{"species"},
		edit: func(spec []byte) ([]byte, error) {
			spec, err := memberEdit(spec, "species", speciesSchema, nil)
			if err != nil {
				return nil, err
			}
			return requiredEdit(spec, "species", "NewPet", "Pet")
		},
	},
}

// speciesSchema is variant f's member.
const speciesSchema = `type: string
description: What kind of animal it is.
maxLength: 40
`

// requiredEdit adds name to the required list of each schema in owners,
// written in flow style on one line ([a, b]).
func requiredEdit(spec []byte, name string, owners ...string) ([]byte, error) {
	root, err := parse(spec)
	if err != nil {
		return nil, err
	}
	lines := bytes.SplitAfter(spec, []byte("\n"))
	for _, owner := range owners {
		req := path(root, "components", "schemas", owner, "required")
		if req == nil || req.Kind != yaml.SequenceNode || req.Style&yaml.FlowStyle == 0 {
			return nil, fmt.Errorf("components.schemas.%s.required: not a flow sequence", owner)
		}
		l := lines[req.Line-1]
		end := bytes.LastIndexByte(l, ']')
		if end < 0 {
			return nil, fmt.Errorf("components.schemas.%s.required: a flow sequence over several lines", owner)
		}
		lines[req.Line-1] = append(append(append([]byte{}, l[:end]...), ", "+name...), l[end:]...)
	}
	return bytes.Join(lines, nil), nil
}

// deletePet is variant e's operation, as it goes under its path in
// openapi.yaml: 204, 404 for a pet that is not (or no longer) there, and
// the answers every operation has. Its 503 is its own: a delete whose
// answer was lost may have happened, and its retry tells.
//
//go:embed testdata/e/operation.yaml
var deletePet string

// variantByName finds a variant by its letter, its name or its member's,
// or makes the variant of several letters: their changes in order, their
// members, the largest raise.
func variantByName(s string) (variant, error) {
	for _, v := range variants {
		if s == v.ID || s == v.Name || len(v.Members) > 0 && s == v.Members[0].Name && s != "status" {
			return v, nil
		}
	}
	if len(s) > 1 {
		var vs []variant
		for _, id := range strings.Split(s, "") {
			v, err := variantByName(id)
			if err != nil || slices.ContainsFunc(vs, func(w variant) bool { return w.ID == id }) {
				return variant{}, fmt.Errorf("no variant %q: letters of variants, each once", s)
			}
			vs = append(vs, v)
		}
		return combine(s, vs), nil
	}
	var names []string
	for _, v := range variants {
		names = append(names, v.ID+" ("+v.Name+")")
	}
	return variant{}, fmt.Errorf("no variant %q: one of %s, or several letters (abcdef)", s, strings.Join(names, ", "))
}

func combine(id string, vs []variant) variant {
	c := variant{ID: id, Raise: "minor"}
	var names, filters []string
	for _, v := range vs {
		names = append(names, v.Name)
		c.Members = append(c.Members, v.Members...)
		c.Required = append(c.Required, v.Required...)
		if v.Raise == "major" {
			c.Raise = "major"
		}
		if v.Filter != "" {
			filters = append(filters, v.Filter)
		}
		if v.Op != nil {
			c.Op = v.Op
		}
	}
	c.Name = strings.Join(names, "+")
	c.Filter = strings.Join(filters, "&")
	c.edit = func(spec []byte) ([]byte, error) {
		for _, v := range vs {
			var err error
			if spec, err = v.edit(spec); err != nil {
				return nil, err
			}
		}
		return spec, nil
	}
	return c
}

// decode is a JSON value with numbers exact.
func decode(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var x any
	err := d.Decode(&x)
	return x, err
}

// memberNames are the names of v's members, comma-separated.
func (v variant) memberNames() string {
	var names []string
	for _, m := range v.Members {
		names = append(names, m.Name)
	}
	return strings.Join(names, ",")
}

// requires says whether the change makes the member name required.
func (v variant) requires(name string) bool { return slices.Contains(v.Required, name) }
