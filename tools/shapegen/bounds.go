package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/value"
	"github.com/petstore/petstore/internal/value/canon"
)

// Bytes a character takes at most: in UTF-8, and in a canonical JSON
// string (a control character escaped as \u00xx).
const (
	utf8Max  = 4
	canonMax = 6
)

// The longest forms package value writes a double and a float in:
// -1.7976931348623157e+308 and -1.17549435e-38 (17 and 9 digits at most,
// a sign, a point, and the longest exponents).
const (
	doubleMax = 24
	floatMax  = 15
)

// unbound is a place in NewPet that the schema leaves without a bound: at,
// a JSON pointer into NewPet; what it lacks; and the fix, the bound to add.
type unbound struct{ at, lacks, fix string }

// String is at and what it lacks: shape.Unbounded's form.
func (u unbound) String() string { return u.at + ": " + u.lacks }

// extraBytes is the most bytes NewPet's members without behaviour take as
// one canonical JSON object (0 when there are none), or -1 and every place
// the schema leaves unbounded, in canonical order of the members. It lists
// those members in names, in canonical order.
func extraBytes(newPet *openapi3.Schema, names *[]string) (int, []unbound) {
	for name := range newPet.Properties {
		if !typed[name] {
			*names = append(*names, name)
		}
	}
	slices.SortFunc(*names, canon.Compare)
	if len(*names) == 0 {
		return 0, nil
	}
	var missing []unbound
	if open(newPet) {
		missing = append(missing, unbound{"/", "additionalProperties is not false", "add additionalProperties: false to NewPet"})
	}
	n := 1 + len(*names) // the braces and the commas between members
	for _, name := range *names {
		m, lacks := maxBytes(newPet.Properties[name].Value, "/"+name)
		missing = append(missing, lacks...)
		n += len(canon.AppendString(nil, name)) + 1 + m
	}
	if len(missing) > 0 {
		return -1, missing
	}
	return n, nil
}

// maxBytes is the most bytes a value of s takes in canonical JSON, or -1
// and every place under at (a JSON pointer) that lacks a bound.
func maxBytes(s *openapi3.Schema, at string) (int, []unbound) {
	if s == nil {
		return -1, []unbound{{at, "no schema", "give it a schema"}}
	}
	n, missing := ownBytes(s, at)
	if len(s.AllOf) > 0 { // a value keeps every branch: the tightest bound holds
		var branches []unbound
		for _, a := range s.AllOf {
			m, lacks := maxBytes(a.Value, at)
			branches = append(branches, lacks...)
			if m >= 0 && (n < 0 || m < n) {
				n, missing = m, nil
			}
		}
		if n < 0 && s.Type == nil && len(s.Enum) == 0 {
			missing = branches // its own lack of a type is the branches' to say
		}
	}
	for _, alts := range [][]*openapi3.SchemaRef{s.OneOf, s.AnyOf} {
		if len(alts) == 0 || n >= 0 && s.Type != nil {
			continue
		}
		n, missing = 0, nil
		for _, a := range alts {
			m, lacks := maxBytes(a.Value, at)
			missing = append(missing, lacks...)
			n = max(n, m)
		}
		if len(missing) > 0 {
			return -1, missing
		}
	}
	if n >= 0 && s.Nullable {
		n = max(n, len("null"))
	}
	return n, missing
}

// ownBytes is maxBytes by s's own enum, type and bounds, without its
// allOf, oneOf and anyOf.
func ownBytes(s *openapi3.Schema, at string) (int, []unbound) {
	lacks := func(what, fix string) (int, []unbound) { return -1, []unbound{{at, what, fix}} }
	if len(s.Enum) > 0 {
		n := 0
		for _, v := range s.Enum {
			b, err := value.Canonical(value.FromSpec(v), nil)
			if err != nil {
				return lacks("an enum value canon cannot write", "give it enum values of JSON")
			}
			n = max(n, len(b))
		}
		return n, nil
	}
	switch {
	case s.Type == nil || len(*s.Type) != 1:
		return lacks("no single type", "give it one type (or an enum)")
	case s.Type.Is("boolean"):
		return len("false"), nil
	case s.Type.Is("null"):
		return len("null"), nil
	case s.Type.Is("string"):
		if s.MaxLength == nil {
			return lacks("no maxLength", "add maxLength, the most characters it takes (a pattern or a format does not bound it)")
		}
		return 2 + int(*s.MaxLength)*canonMax, nil
	case s.Type.Is("integer"), s.Type.Is("number"):
		return numberBytes(s, at)
	case s.Type.Is("array"):
		return arrayBytes(s, at)
	case s.Type.Is("object"):
		return objectBytes(s, at)
	}
	return lacks("a type canon does not bound", "give it a type of JSON")
}

// arrayBytes bounds an array by its maxItems and its items' bound; where
// both lack one, both are said.
func arrayBytes(s *openapi3.Schema, at string) (int, []unbound) {
	var missing []unbound
	if s.MaxItems == nil {
		missing = append(missing, unbound{at, "no maxItems", "add maxItems, the most items it takes"})
	}
	item, lacks := maxBytes(itemSchema(s), at+"/items")
	missing = append(missing, lacks...)
	if len(missing) > 0 {
		return -1, missing
	}
	k := int(*s.MaxItems)
	return 2 + k*item + max(k-1, 0), nil
}

// itemSchema is an array's items, or nil.
func itemSchema(s *openapi3.Schema) *openapi3.Schema {
	if s.Items == nil {
		return nil
	}
	return s.Items.Value
}

// numberBytes bounds an integer or a number: an integer literal by its
// bounds' digits (or its format's), a float or a double by its longest
// form; a number without a format is kept exactly, however long its digits.
func numberBytes(s *openapi3.Schema, at string) (int, []unbound) {
	if s.Type.Is("number") {
		switch s.Format {
		case "float":
			return floatMax, nil
		case "double":
			return doubleMax, nil
		}
		return -1, []unbound{{at, "a number without format float or double (kept exactly, however many its digits)",
			"add format: double (or float)"}}
	}
	digits := -1
	switch {
	case s.Min != nil && s.Max != nil:
		digits = max(len(strconv.FormatFloat(math.Trunc(*s.Min), 'f', -1, 64)),
			len(strconv.FormatFloat(math.Trunc(*s.Max), 'f', -1, 64)))
	case s.Type.Is("integer") && s.Format == "int32":
		digits = len("-2147483648")
	case s.Type.Is("integer") && s.Format == "int64":
		digits = len("-9223372036854775808")
	}
	if digits < 0 {
		return -1, []unbound{{at, "no minimum and maximum (or integer format)", "add minimum and maximum, or format: int32 (or int64)"}}
	}
	return digits, nil
}

// objectBytes bounds an object by its properties, when it takes no other.
func objectBytes(s *openapi3.Schema, at string) (int, []unbound) {
	var missing []unbound
	if open(s) {
		missing = append(missing, unbound{at, "additionalProperties is not false", "add additionalProperties: false"})
	}
	n := 1 + max(len(s.Properties), 1)
	for _, name := range slices.SortedFunc(maps.Keys(s.Properties), canon.Compare) {
		m, lacks := maxBytes(s.Properties[name].Value, fmt.Sprintf("%s/%s", at, name))
		missing = append(missing, lacks...)
		n += len(canon.AppendString(nil, name)) + 1 + m
	}
	if len(missing) > 0 {
		return -1, missing
	}
	return n, nil
}

// open reports whether an object schema takes members it does not list.
func open(s *openapi3.Schema) bool {
	ap := s.AdditionalProperties
	return ap.Schema != nil || ap.Has == nil || *ap.Has
}
