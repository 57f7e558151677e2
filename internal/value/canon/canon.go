// Package canon writes JSON values in one canonical form, schema-free, so
// that two values that are the same JSON value are the same bytes; package
// value, its one user for values, first puts each in the form its schema
// gives it (a float32, an instant, the defaults). Its members walker splices
// canonical objects into others without decoding them.
//
// The form is RFC 8785's (JSON Canonicalization Scheme), but for numbers.
// As in RFC 8785: no white space; the members of an object sorted by their
// names' UTF-16 code units; a string escaped minimally (`"`, `\` and the
// control characters U+0000 to U+001F only, as `\b`, `\t`, `\n`, `\f`,
// `\r` or `\u00xx`, lower case; everything else as its UTF-8 bytes). A
// number is its exact decimal value (Decimal), never rounded to a double,
// in the layout RFC 8785 gives a double (ECMAScript's): 1, 1.0 and 1e0 are
// 1; 1e21 and 1000000000000000000000 are 1e+21; 9007199254740993.0 is
// 9007199254740993. A double's value whose shortest digits are its exact
// ones is written as RFC 8785 writes it.
//
// Canonical JSON never holds a raw control character, so never a NUL byte.
package canon

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Append appends v in canonical form. v is what strict.DecodeJSON (or
// encoding/json with UseNumber) decodes: map[string]any, []any, string,
// json.Number, bool or nil; float64 and the integer types are taken too
// (a kin-openapi schema's default).
func Append(b []byte, v any) ([]byte, error) { return writer{}.append(b, v) }

// AppendAsIs is Append, but it writes each json.Number as it is: for a
// value whose numbers are each in a canonical form already (package value
// writes an integer of a schema in plain digits, Decimal.AppendInteger).
func AppendAsIs(b []byte, v any) ([]byte, error) { return writer{asRead: true}.append(b, v) }

// writer writes canonical JSON; asRead writes each number as it is given
// (Object checks its form apart).
type writer struct{ asRead bool }

func (w writer) append(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case string:
		if !utf8.ValidString(v) {
			return b, errors.New("canon: a string is not valid UTF-8")
		}
		return AppendString(b, v), nil
	case json.Number:
		if w.asRead {
			return append(b, v...), nil
		}
		d, err := ParseDecimal(string(v))
		if err != nil {
			return b, err
		}
		return d.Append(b), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return b, errors.New("canon: NaN and infinities are no JSON numbers")
		}
		return FloatDecimal(v, 64).Append(b), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = w.append(b, e); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		return w.appendObject(b, v)
	}
	return b, fmt.Errorf("canon: a %T is no JSON value", v)
}

func (w writer) appendObject(b []byte, m map[string]any) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !utf8.ValidString(k) {
			return b, errors.New("canon: a member name is not valid UTF-8")
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, Compare)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = w.append(b, m[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// AppendString appends s, valid UTF-8, quoted and minimally escaped.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, `\b`...)
		case '\t':
			b = append(b, `\t`...)
		case '\n':
			b = append(b, `\n`...)
		case '\f':
			b = append(b, `\f`...)
		case '\r':
			b = append(b, `\r`...)
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Compare orders member names as RFC 8785 does: by their UTF-16 code
// units. It differs from Go's byte order only where a character above
// U+FFFF meets one of U+E000 to U+FFFF.
func Compare(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			if ua, ub := unit(ra), unit(rb); ua != ub {
				return int(ua - ub)
			}
			return int(ra - rb)
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

// unit is the first UTF-16 code unit of r.
func unit(r rune) rune {
	if r >= 0x10000 {
		return 0xd800 + (r-0x10000)>>10
	}
	return r
}
