// Package newpet maps the body of a create, decoded (strict.DecodeJSON)
// and valid against a spec's NewPet schema, to a pets.NewPet: the members
// with behaviour (name, categoryId, status) to their fields, and every
// other member, whatever the spec names, to its Extra in canonical JSON,
// and to its Plain, what the fingerprint hashes. The meaning of each value
// is package value's: the schema's defaults at every depth, integers to the
// letter (no fraction or exponent, within their format, which a validator
// that reads numbers as float64 cannot hold), each scalar in the form its
// schema gives it. A member added to NewPet needs no code here.
package newpet

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/strict"
	"github.com/petstore/petstore/internal/value"
)

// Mapper maps bodies valid against one NewPet schema.
type Mapper struct {
	schema *openapi3.Schema
}

// New returns the Mapper of a NewPet schema, which must name the members
// with behaviour.
func New(schema *openapi3.Schema) (*Mapper, error) {
	if schema == nil {
		return nil, errors.New("newpet: no NewPet schema")
	}
	for _, m := range []string{"name", "categoryId", "status"} {
		if schema.Properties[m] == nil {
			return nil, fmt.Errorf("newpet: NewPet has no member %q", m)
		}
	}
	return &Mapper{schema: schema}, nil
}

// NewPet maps body, a JSON object valid against the schema. It takes the
// body's members for its own: the caller must not use body after.
func (m *Mapper) NewPet(body any) (pets.NewPet, error) {
	obj, _ := body.(map[string]any)
	if obj == nil {
		return pets.NewPet{}, errors.New("newpet: the body is not an object")
	}
	v, err := value.Normalize(obj, m.schema)
	if err != nil {
		return pets.NewPet{}, err
	}
	obj, _ = v.(map[string]any)
	var n pets.NewPet
	n.Name, _ = obj["name"].(string)
	num, _ := obj["categoryId"].(json.Number)
	id, err := strict.Int64.JSON("categoryId", num)
	if err != nil {
		return pets.NewPet{}, err
	}
	n.CategoryID = id
	if s, ok := obj["status"].(string); ok {
		n.Status = pets.Status(s)
	}
	rest, err := other(obj)
	if err != nil || rest == "" {
		return n, err
	}
	n.Extra = rest
	// What the fingerprint hashes: the members at their defaults left out,
	// at every depth, of the whole object (a schema's oneOf may need it).
	plain, err := value.Plain(obj, m.schema)
	if err != nil {
		return pets.NewPet{}, err
	}
	pm, _ := plain.(map[string]any)
	if n.Plain, err = other(pm); err == nil && n.Plain == "" {
		n.Plain = "{}"
	}
	return n, err
}

// typed are the members of a NewPet with fields of their own.
var typed = [...]string{"name", "categoryId", "status"}

// other is obj's members but name, categoryId and status, normalised, in
// canonical JSON; "" for none.
func other(obj map[string]any) (pets.Extra, error) {
	n := len(obj)
	for _, k := range typed {
		if _, ok := obj[k]; ok {
			n--
		}
	}
	if n == 0 {
		return "", nil
	}
	rest := make(map[string]any, n)
	for k, v := range obj {
		rest[k] = v
	}
	for _, k := range typed {
		delete(rest, k)
	}
	b, err := value.Append(nil, rest)
	return pets.Extra(b), err
}
