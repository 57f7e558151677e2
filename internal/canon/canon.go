// Package canon writes JSON values in one canonical form, so that two
// values that mean the same are the same bytes: the form a pet's members
// without behaviour are stored, answered and fingerprinted in.
//
// The form is RFC 8785's (JSON Canonicalization Scheme), with one
// deviation. As in RFC 8785: no white space; the members of an object
// sorted by their names' UTF-16 code units; a string escaped minimally
// (`"`, `\` and the control characters U+0000 to U+001F only, as `\b`,
// `\t`, `\n`, `\f`, `\r` or `\u00xx`, lower case; everything else as its
// UTF-8 bytes). The deviation: RFC 8785 writes every number as its IEEE 754
// double, which would round an int64 above 2^53. Here a number written
// without fraction or exponent is written as its exact base-10 digits
// (`-0` as `0`), however long; any other is RFC 8785's (ECMAScript's)
// form of its double value, so `1.50`, `15e-1` and `1.5` are one value,
// and `1.0` is `1`.
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
	"strings"
	"unicode/utf8"
)

// Append appends v in canonical form. v is what strict.DecodeJSON (or
// encoding/json with UseNumber) decodes: map[string]any, []any, string,
// json.Number, bool or nil; float64 and the integer types are taken too
// (a kin-openapi schema's default).
func Append(b []byte, v any) ([]byte, error) {
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
		return appendNumber(b, string(v))
	case float64:
		return appendFloat(b, v)
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
			if b, err = Append(b, e); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		return appendObject(b, v)
	}
	return b, fmt.Errorf("canon: a %T is no JSON value", v)
}

func appendObject(b []byte, m map[string]any) ([]byte, error) {
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
		if b, err = Append(b, m[k]); err != nil {
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

// appendNumber appends the JSON number n (valid JSON number syntax).
func appendNumber(b []byte, n string) ([]byte, error) {
	if n == "" {
		return b, errors.New("canon: an empty number")
	}
	if !strings.ContainsAny(n, ".eE") {
		if n == "-0" {
			n = "0"
		}
		return append(b, n...), nil
	}
	f, err := strconv.ParseFloat(n, 64)
	if err != nil {
		return b, fmt.Errorf("canon: number %.32s: out of the range of a double", n)
	}
	return appendFloat(b, f)
}

// appendFloat appends f as ECMAScript's Number.prototype.toString writes
// it (RFC 8785, 3.2.2.3): an integral value under 10^21 in plain digits.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, errors.New("canon: NaN and infinities are no JSON numbers")
	}
	if f == 0 {
		return append(b, '0'), nil
	}
	if a := math.Abs(f); a >= 1e21 || a < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64) // 1e+21, 1.5e-07
		i := strings.IndexByte(s, 'e')
		b = append(b, s[:i+2]...)
		return append(b, strings.TrimLeft(s[i+2:], "0")...), nil
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64), nil
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
