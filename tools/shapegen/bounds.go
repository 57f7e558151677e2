package main

import (
	"fmt"
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

// extraBytes is the most bytes NewPet's members without behaviour take as
// one canonical JSON object (0 when there are none), or -1 and where the
// first unbounded one is. It lists those members in names, in canonical
// order.
func extraBytes(newPet *openapi3.Schema, names *[]string) (int, string) {
	for name := range newPet.Properties {
		if !typed[name] {
			*names = append(*names, name)
		}
	}
	slices.SortFunc(*names, canon.Compare)
	if len(*names) == 0 {
		return 0, ""
	}
	if open(newPet) {
		return -1, "/: additionalProperties is not false"
	}
	n := 1 + len(*names) // the braces and the commas between members
	for _, name := range *names {
		m, where := maxBytes(newPet.Properties[name].Value, "/"+name)
		if m < 0 {
			return -1, where
		}
		n += len(canon.AppendString(nil, name)) + 1 + m
	}
	return n, ""
}

// maxBytes is the most bytes a value of s takes in canonical JSON, or -1
// and where (a JSON pointer under at) and what bound is missing.
func maxBytes(s *openapi3.Schema, at string) (int, string) {
	if s == nil {
		return -1, at + ": no schema"
	}
	n, where := ownBytes(s, at)
	if len(s.AllOf) > 0 { // a value keeps every branch: the tightest bound holds
		for _, a := range s.AllOf {
			if m, _ := maxBytes(a.Value, at); m >= 0 && (n < 0 || m < n) {
				n, where = m, ""
			}
		}
	}
	for _, alts := range [][]*openapi3.SchemaRef{s.OneOf, s.AnyOf} {
		if len(alts) == 0 || n >= 0 && s.Type != nil {
			continue
		}
		n, where = 0, ""
		for _, a := range alts {
			m, w := maxBytes(a.Value, at)
			if m < 0 {
				return -1, w
			}
			n = max(n, m)
		}
	}
	if n >= 0 && s.Nullable {
		n = max(n, len("null"))
	}
	return n, where
}

// ownBytes is maxBytes by s's own enum, type and bounds, without its
// allOf, oneOf and anyOf.
func ownBytes(s *openapi3.Schema, at string) (int, string) {
	if len(s.Enum) > 0 {
		n := 0
		for _, v := range s.Enum {
			b, err := value.Canonical(value.FromSpec(v), nil)
			if err != nil {
				return -1, at + ": an enum value canon cannot write"
			}
			n = max(n, len(b))
		}
		return n, ""
	}
	switch {
	case s.Type == nil || len(*s.Type) != 1:
		return -1, at + ": no single type"
	case s.Type.Is("boolean"):
		return len("false"), ""
	case s.Type.Is("null"):
		return len("null"), ""
	case s.Type.Is("string"):
		if s.MaxLength == nil {
			return -1, at + ": no maxLength"
		}
		return 2 + int(*s.MaxLength)*canonMax, ""
	case s.Type.Is("integer"), s.Type.Is("number"):
		return numberBytes(s, at)
	case s.Type.Is("array"):
		if s.MaxItems == nil {
			return -1, at + ": no maxItems"
		}
		if s.Items == nil {
			return -1, at + "/items: no schema"
		}
		item, where := maxBytes(s.Items.Value, at+"/items")
		if item < 0 {
			return -1, where
		}
		k := int(*s.MaxItems)
		return 2 + k*item + max(k-1, 0), ""
	case s.Type.Is("object"):
		return objectBytes(s, at)
	}
	return -1, at + ": a type canon does not bound"
}

// numberBytes bounds an integer or a number: an integer literal by its
// bounds' digits (or its format's), a float or a double by its longest
// form; a number without a format is kept exactly, however long its digits.
func numberBytes(s *openapi3.Schema, at string) (int, string) {
	if s.Type.Is("number") {
		switch s.Format {
		case "float":
			return floatMax, ""
		case "double":
			return doubleMax, ""
		}
		return -1, at + ": a number without format float or double (kept exactly, however many its digits)"
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
		return -1, at + ": no minimum and maximum (or integer format)"
	}
	return digits, ""
}

// objectBytes bounds an object by its properties, when it takes no other.
func objectBytes(s *openapi3.Schema, at string) (int, string) {
	if open(s) {
		return -1, at + ": additionalProperties is not false"
	}
	n := 1 + max(len(s.Properties), 1)
	for name, p := range s.Properties {
		m, where := maxBytes(p.Value, fmt.Sprintf("%s/%s", at, name))
		if m < 0 {
			return -1, where
		}
		n += len(canon.AppendString(nil, name)) + 1 + m
	}
	return n, ""
}

// open reports whether an object schema takes members it does not list.
func open(s *openapi3.Schema) bool {
	ap := s.AdditionalProperties
	return ap.Schema != nil || ap.Has == nil || *ap.Has
}
