package conform

import (
	"github.com/petstore/petstore/internal/conform/cases"

	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/schemagen"
)

// operation is one operation of the spec (cases.Operation).
type operation = cases.Operation

// headerSendable reports whether v can be sent as a header field value:
// no control character but tab (RFC 9110, 5.5). Other values cannot
// reach the target, so they are no case.
func headerSendable(v string) bool {
	for i := 0; i < len(v); i++ {
		if (v[i] < 0x20 && v[i] != '\t') || v[i] == 0x7f {
			return false
		}
	}
	return true
}

func (r *run) operation(id string) *operation {
	for _, op := range r.ops {
		if op.ID == id {
			return op
		}
	}
	return nil
}

// flat resolves a schema that is only an allOf of one schema (plus a
// default or a description), as OpenAPI 3.0 writes a $ref with siblings.
func flat(s *openapi3.Schema) *openapi3.Schema {
	if s == nil || len(s.AllOf) != 1 || s.AllOf[0].Value == nil || s.Type != nil {
		return s
	}
	inner := *s.AllOf[0].Value
	if s.Default != nil {
		inner.Default = s.Default
	}
	return &inner
}

func isType(s *openapi3.Schema, t string) bool { return s.Type != nil && s.Type.Is(t) }

// minInt64 is the smallest int64: a range that starts there has no
// value below it to send.
var minInt64 = big.NewInt(math.MinInt64)

// intBounds returns the inclusive range of an integer schema: its minimum
// and maximum (exclusive ones made inclusive), within its format's range
// (schemagen.IntBounds).
func intBounds(s *openapi3.Schema) (lo, hi *big.Int) { return schemagen.IntBounds(s) }

// value is one value of a parameter or body member: text is its form in a
// query or path, json its form in a body.
type value struct {
	label string
	text  string
	json  any
}

func intValue(label string, n *big.Int) value {
	return value{label: label, text: n.String(), json: json.Number(n.String())}
}

func strValue(label, s string) value { return value{label: label, text: s, json: s} }

// valid returns values the schema accepts: each enum value; an integer's
// minimum, maximum and one between; a string at its shortest and longest, in
// ASCII and not, and one between.
func (r *run) valid(s *openapi3.Schema) []value {
	s = flat(s)
	switch {
	case s == nil:
		return nil
	case len(s.Enum) > 0:
		var vs []value
		for _, e := range s.Enum {
			vs = append(vs, value{label: fmt.Sprintf("enum %v", e), text: fmt.Sprint(e), json: e})
		}
		return vs
	case isType(s, "integer"):
		lo, hi := intBounds(s)
		mid := new(big.Int).Sub(hi, lo)
		mid.Rsh(mid, 1)
		if mid.IsInt64() && mid.Int64() > 0 {
			mid = big.NewInt(r.rng.Int64N(min(mid.Int64(), 1_000_000)) + 1)
		}
		mid.Add(mid, lo)
		return []value{intValue("minimum", lo), intValue("maximum", hi), intValue("between", mid)}
	case isType(s, "string"):
		return r.validStrings(s)
	case isType(s, "boolean"):
		return []value{{label: "true", text: "true", json: true}, {label: "false", text: "false", json: false}}
	}
	return r.schemaValues(s) // arrays, objects, numbers (values.go)
}

// nonASCII is the alphabet of the non-ASCII names: two- to four-byte UTF-8.
var nonASCII = []rune("éßøπждשع猫犬🐈🐕")

func (r *run) validStrings(s *openapi3.Schema) []value {
	if s.Format != "" {
		return r.schemaValues(s) // a format's values, from the schema (values.go)
	}
	lo := int(s.MinLength)
	hi := lo + 16
	if s.MaxLength != nil {
		hi = int(*s.MaxLength)
	}
	alpha := []rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
	gen := func(n int, set []rune) string {
		b := make([]rune, n)
		for i := range b {
			b[i] = set[r.rng.IntN(len(set))]
		}
		return string(b)
	}
	candidates := []value{
		strValue("shortest", gen(max(lo, 1), alpha)),
		strValue("longest", gen(hi, alpha)),
		strValue("longest, non-ASCII", gen(hi, nonASCII)),
		strValue("between, mixed", gen(lo+r.rng.IntN(max(hi-lo, 1)), append(alpha, nonASCII...))),
	}
	if lo == 0 {
		candidates = append(candidates, strValue("empty", ""))
	}
	var vs []value
	for _, v := range candidates {
		// A pattern may hold a string to fewer characters than maxLength
		// (a key of 255 in a field of 257 that allows two quotes): take
		// the longest it accepts, a few characters shorter at most.
		for cut := 0; cut < 4 && !stringOK(s, v.text) && utf8.RuneCountInString(v.text) > max(lo, 1); cut++ {
			rs := []rune(v.text)
			v.text = string(rs[:len(rs)-1])
			v.json = v.text
		}
		if stringOK(s, v.text) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 { // a pattern the alphabets do not meet: strings that match it, from the schema
		return r.schemaValues(s)
	}
	return vs
}

// stringOK reports whether s accepts str: length in characters and pattern.
func stringOK(s *openapi3.Schema, str string) bool {
	n := uint64(utf8.RuneCountInString(str))
	if n < s.MinLength || (s.MaxLength != nil && n > *s.MaxLength) {
		return false
	}
	if s.Pattern != "" {
		re, err := compilePattern(s.Pattern)
		if err != nil || !re.MatchString(str) {
			return false
		}
	}
	return true
}

// ecmaCodepoint is an ECMAScript \uXXXX escape, which Go's regexp spells
// \x{XXXX}: the contract's patterns use it, upper-case, as kin-openapi reads
// them.
var ecmaCodepoint = regexp.MustCompile(`\\u([0-9A-F]{4})`)

// patterns holds each pattern compiled once: the kit tests thousands of
// strings against a few patterns.
var patterns sync.Map // pattern → compiled

type compiled struct {
	re  *regexp.Regexp
	err error
}

// compilePattern compiles an OpenAPI pattern (ECMAScript) with Go's regexp,
// as kin-openapi does.
func compilePattern(p string) (*regexp.Regexp, error) {
	if c, ok := patterns.Load(p); ok {
		return c.(compiled).re, c.(compiled).err
	}
	re, err := regexp.Compile(ecmaCodepoint.ReplaceAllString(p, `\x{$1}`))
	patterns.Store(p, compiled{re, err})
	return re, err
}

// patternSuspects are strings a pattern over free text most often refuses:
// C0 and C1 controls, explicit bidirectional overrides and isolates, and
// strings of only (Unicode) white space.
var patternSuspects = []string{
	"a\x00b", "a\tb", "a\nb", "\x7f", "a\u0085b", "a\u009fb",
	"evil\u202egnp.exe", "a\u202ab", "a\u2066b", "a\u2069b",
	" ", "   ", "\u00a0", "\u3000", "\u2028", "\u0085",
	"-", "0",
	// Characters outside a token's syntax.
	"a b", "a,b", "a;b", "a\"b", "\"ab", "a@b", "a\\b", "a{b}", "aéb",
}

// invalid returns values that break exactly one rule of the schema each,
// labelled by the rule. inBody is whether they go in a JSON body, where a
// string is not a number and a number is not a string.
func invalid(s *openapi3.Schema, inBody bool) []value {
	s = flat(s)
	if s == nil {
		return nil
	}
	var vs []value
	switch {
	case isType(s, "integer"):
		lo, hi := intBounds(s)
		if lo.Cmp(minInt64) > 0 || s.Format == "int32" {
			vs = append(vs, intValue("below minimum", new(big.Int).Sub(lo, big.NewInt(1))))
		}
		vs = append(vs, intValue("above maximum", new(big.Int).Add(hi, big.NewInt(1))))
		vs = append(vs, value{label: "not an integer", text: "1.5", json: json.Number("1.5")})
		// A valid number spelt another way: the contract gives integers
		// one spelling (no sign, leading zeros or -0; no fraction or
		// exponent in a body).
		n := new(big.Int).Set(lo)
		if n.Sign() < 0 {
			n.SetInt64(0)
		}
		if n.Sign() == 0 {
			n.SetInt64(1)
		}
		if n.Cmp(hi) <= 0 {
			if inBody {
				vs = append(vs,
					value{label: "not canonical: fraction", json: json.Number(n.String() + ".0")},
					value{label: "not canonical: exponent", json: json.Number(n.String() + "e0")})
			} else {
				vs = append(vs,
					value{label: "not canonical: plus sign", text: "+" + n.String()},
					value{label: "not canonical: leading zero", text: "0" + n.String()})
			}
		}
		if !inBody && lo.Sign() <= 0 && hi.Sign() >= 0 {
			vs = append(vs, value{label: "not canonical: -0", text: "-0"})
		}
		if inBody {
			vs = append(vs, value{label: "wrong type: string", json: "1"})
		} else {
			vs = append(vs, value{label: "wrong type: word", text: "abc"})
		}
	case isType(s, "string"):
		if inBody {
			vs = append(vs, value{label: "wrong type: number", json: json.Number("1")})
		}
		if len(s.Enum) > 0 {
			first := fmt.Sprint(s.Enum[0])
			for _, v := range []string{"no-such-" + first, strings.ToUpper(first[:1]) + first[1:], first + " "} {
				if !slices.Contains(s.Enum, any(v)) {
					vs = append(vs, strValue("outside the enum: "+strconv.Quote(v), v))
				}
			}
			break
		}
		if s.MinLength > 0 {
			vs = append(vs, strValue("too short", strings.Repeat("a", int(s.MinLength)-1)))
		}
		if s.MaxLength != nil {
			vs = append(vs, strValue("too long", strings.Repeat("a", int(*s.MaxLength)+1)))
		}
		if s.Pattern != "" {
			// Strings of an allowed length that the pattern refuses, from
			// the usual suspects.
			for _, c := range patternSuspects {
				if n := uint64(utf8.RuneCountInString(c)); n >= s.MinLength && (s.MaxLength == nil || n <= *s.MaxLength) && !stringOK(s, c) {
					vs = append(vs, strValue("against the pattern: "+strconv.Quote(c), c))
				}
			}
		}
	case isType(s, "array"), isType(s, "object"), isType(s, "number"):
		vs = invalidNested(s) // values.go
	}
	if inBody && !isType(s, "boolean") {
		vs = append(vs, value{label: "wrong type: boolean", json: true})
	}
	return vs
}
