// Package newpet maps the body of a create, decoded (strict.DecodeJSON)
// and valid against a spec's NewPet schema, to a pets.NewPet: the members
// with behaviour (name, categoryId, status) to their fields, and every
// other member, whatever the spec names, to its Extra in canonical JSON.
// It applies the schema's defaults, at any depth, and holds every integer
// to the letter (no fraction or exponent, within its format), which a
// validator that reads numbers as float64 cannot. A member added to
// NewPet needs no code here.
package newpet

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/canon"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/strict"
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
	if err := normalize(obj, m.schema, ""); err != nil {
		return pets.NewPet{}, err
	}
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
	delete(obj, "name")
	delete(obj, "categoryId")
	delete(obj, "status")
	if len(obj) > 0 {
		b, err := canon.Append(nil, obj)
		if err != nil {
			return pets.NewPet{}, err
		}
		n.Extra = pets.Extra(b)
	}
	return n, nil
}

// normalize applies s's defaults to v, where v lacks them, and checks its
// integers, at path (for the message).
func normalize(v any, s *openapi3.Schema, path string) error {
	if s == nil {
		return nil
	}
	for _, a := range s.AllOf {
		if err := normalize(v, a.Value, path); err != nil {
			return err
		}
	}
	switch v := v.(type) {
	case map[string]any:
		for name, p := range s.Properties {
			if p.Value == nil {
				continue
			}
			if _, ok := v[name]; !ok {
				if d := defaultOf(p.Value); d != nil {
					v[name] = copyJSON(d)
				}
				continue
			}
			if err := normalize(v[name], p.Value, join(path, name)); err != nil {
				return err
			}
		}
	case []any:
		if s.Items != nil {
			for i, e := range v {
				if err := normalize(e, s.Items.Value, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	case json.Number:
		if s.Type != nil && s.Type.Is("integer") {
			rule := strict.Int64
			if s.Format == "int32" {
				rule = strict.Int32
			}
			if _, err := rule.JSON(path, v); err != nil && (s.Format != "" || !bigInt(v)) {
				return err
			}
		}
	}
	return nil
}

// defaultOf is s's default, or its allOf's first.
func defaultOf(s *openapi3.Schema) any {
	if s.Default != nil {
		return s.Default
	}
	for _, a := range s.AllOf {
		if a.Value != nil {
			if d := defaultOf(a.Value); d != nil {
				return d
			}
		}
	}
	return nil
}

// copyJSON copies a default, so that no two pets share its maps or slices.
func copyJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := maps.Clone(v)
		for k, e := range m {
			m[k] = copyJSON(e)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = copyJSON(e)
		}
		return s
	}
	return v
}

// bigInt reports whether n is an integer literal (no fraction, no
// exponent) beyond int64: an integer without a format may be one.
func bigInt(n json.Number) bool {
	for i, c := range []byte(n) {
		if !(c >= '0' && c <= '9' || c == '-' && i == 0) {
			return false
		}
	}
	return len(n) > 0
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
