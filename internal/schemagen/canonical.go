package schemagen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Canonical writes v, a JSON-ready value, in one form: the JSON
// Canonicalization Scheme (RFC 8785), but for integers, which are written
// exactly (base 10, no sign but a minus, no leading zeros, -0 as 0), never
// rounded to a double: object members sorted by their names' UTF-16 code
// units, no white space, strings escaped only where JSON must be (the
// quote, the backslash, control characters), other numbers in ECMAScript's
// shortest form. Two values are the same JSON value exactly when their
// canonical forms are equal. v may hold the values encoding/json decodes
// (float64 or json.Number numbers, []any, map[string]any) and int, int64.
func Canonical(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := canon(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// CanonicalJSON is Canonical of the JSON text data, its numbers read
// exactly.
func CanonicalJSON(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("schemagen: trailing data after the JSON value")
	}
	return Canonical(v)
}

func canon(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		canonString(b, v)
	case json.Number:
		return canonNumber(b, string(v))
	case float64:
		return canonFloat(b, v)
	case int:
		b.WriteString(strconv.Itoa(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := canon(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareUTF16)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			canonString(b, k)
			b.WriteByte(':')
			if err := canon(b, v[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("schemagen: %T is not a JSON value", v)
	}
	return nil
}

// compareUTF16 orders strings by their UTF-16 code units, as RFC 8785
// sorts member names.
func compareUTF16(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	return slices.Compare(ua, ub)
}

func canonString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			var buf [utf8.UTFMax]byte
			b.Write(buf[:utf8.EncodeRune(buf[:], r)])
		}
	}
	b.WriteByte('"')
}

// canonNumber writes a JSON number: an integer exactly, any other number
// as a double in ECMAScript's form.
func canonNumber(b *bytes.Buffer, text string) error {
	if !strings.ContainsAny(text, ".eE") {
		n, ok := new(big.Int).SetString(text, 10)
		if !ok {
			return fmt.Errorf("schemagen: %q is not a JSON number", text)
		}
		b.WriteString(n.String())
		return nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return fmt.Errorf("schemagen: %q: %w", text, err)
	}
	return canonFloat(b, f)
}

// canonFloat writes f as ECMAScript's Number.prototype.toString does
// (RFC 8785, 3.2.2.3); an integral f below 2^53 is an integer.
func canonFloat(b *bytes.Buffer, f float64) error {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return fmt.Errorf("schemagen: %v is not a JSON number", f)
	case f == 0:
		b.WriteByte('0')
		return nil
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		b.WriteString(strconv.FormatFloat(f, 'f', -1, 64))
		return nil
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // 1e-07, 1.5e+21
	mant, exp, _ := strings.Cut(s, "e")
	sign := exp[0]
	exp = strings.TrimLeft(exp[1:], "0")
	b.WriteString(mant + "e" + string(sign) + exp)
	return nil
}
