package canon

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// Members walks the members of an object in canonical form, in order, to
// merge them with members written otherwise (the pet's typed ones) into
// one object in canonical order, without decoding it.
type Members struct {
	rest string // the members not yet walked, without the braces
}

// MembersOf walks the members of obj, an object in canonical form, or ""
// for none.
func MembersOf(obj string) Members {
	if len(obj) < 2 {
		return Members{}
	}
	return Members{obj[1 : len(obj)-1]}
}

// AppendBefore appends, each followed by a comma, the members not yet
// walked whose names sort before name, a name without escapes.
func (m *Members) AppendBefore(b []byte, name string) []byte {
	for m.rest != "" {
		key, member, rest := next(m.rest)
		if Compare(key, name) >= 0 {
			break
		}
		b = append(b, member...)
		b = append(b, ',')
		m.rest = rest
	}
	return b
}

// AppendFirst appends the next member not yet walked, without a comma, and
// walks past it.
func (m *Members) AppendFirst(b []byte) []byte {
	if m.rest == "" {
		return b
	}
	_, member, rest := next(m.rest)
	m.rest = rest
	return append(b, member...)
}

// AppendRest appends the members not yet walked, each followed by a comma.
func (m *Members) AppendRest(b []byte) []byte {
	if m.rest == "" {
		return b
	}
	b = append(b, m.rest...)
	m.rest = ""
	return append(b, ',')
}

// Names returns the names of obj's members, in order.
func Names(obj string) []string {
	var names []string
	for m := MembersOf(obj); m.rest != ""; {
		var key string
		key, _, m.rest = next(m.rest)
		names = append(names, key)
	}
	return names
}

// next splits members, canonical and not empty, into the first member's
// name (unescaped), the member, and the members after its comma.
func next(members string) (key, member, rest string) {
	end := skipString(members, 0)
	key = members[1 : end-1]
	if strings.IndexByte(key, '\\') >= 0 {
		key, _ = strconv.Unquote(members[:end]) // canonical escapes are Go's too
	}
	depth := 0
	for i := end + 1; i < len(members); i++ {
		switch members[i] {
		case '"':
			i = skipString(members, i) - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			if depth == 0 {
				return key, members[:i], members[i+1:]
			}
		}
	}
	return key, members, ""
}

// skipString returns the index after the string that starts at s[i].
func skipString(s string, i int) int {
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(s)
}

// Object returns nil when s, a JSON object, is in canonical form, or an
// error saying why not. "" (no object) is canonical too. A number may be
// written in the layout of its value or, an integer, in plain digits
// (Decimal.AppendInteger): the forms package value writes a number of a
// schema in.
func Object(s string) error {
	if s == "" {
		return nil
	}
	if s[0] != '{' {
		return errors.New("canon: not an object")
	}
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return err
	}
	if d.More() || d.InputOffset() != int64(len(s)) {
		return errors.New("canon: trailing data after the object")
	}
	if err := numbersCanonical(v); err != nil {
		return err
	}
	b, err := writer{asRead: true}.append(make([]byte, 0, len(s)), v)
	if err != nil {
		return err
	}
	if !bytes.Equal(b, []byte(s)) {
		return errors.New("canon: not in canonical form")
	}
	return nil
}

// numbersCanonical returns an error naming the first number of v that is
// in no canonical form.
func numbersCanonical(v any) error {
	switch v := v.(type) {
	case json.Number:
		if !canonicalNumber(string(v)) {
			return errors.New("canon: number " + cut(string(v)) + " is not in canonical form")
		}
	case []any:
		for _, e := range v {
			if err := numbersCanonical(e); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, e := range v {
			if err := numbersCanonical(e); err != nil {
				return err
			}
		}
	}
	return nil
}
