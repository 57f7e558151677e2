package cases

// The values the cases send, from the schemas: valid ones at every bound,
// and ones that break one rule each.

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/schemagen"
	"github.com/petstore/petstore/internal/value"
)

// HeaderSendable reports whether v can be sent as a header field value:
// no control character but tab (RFC 9110, 5.5). Other values cannot
// reach the target, so they are no case.
func HeaderSendable(v string) bool {
	for i := 0; i < len(v); i++ {
		if (v[i] < 0x20 && v[i] != '\t') || v[i] == 0x7f {
			return false
		}
	}
	return true
}

// Flat resolves a schema that is only an allOf of one schema (plus a
// default or a description), as OpenAPI 3.0 writes a $ref with siblings.
// Its default is package value's to read (value.Default).
func Flat(s *openapi3.Schema) *openapi3.Schema {
	if s == nil || len(s.AllOf) != 1 || s.AllOf[0].Value == nil || s.Type != nil {
		return s
	}
	inner := *s.AllOf[0].Value
	return &inner
}

// IsType reports whether s is of type t.
func IsType(s *openapi3.Schema, t string) bool { return s.Type != nil && s.Type.Is(t) }

// minInt64 is the smallest int64: a range that starts there has no
// value below it to send.
var minInt64 = big.NewInt(math.MinInt64)

// IntBounds returns the inclusive range of an integer schema: its minimum
// and maximum (exclusive ones made inclusive), within its format's range
// (schemagen.IntBounds).
func IntBounds(s *openapi3.Schema) (lo, hi *big.Int) { return schemagen.IntBounds(s) }

// Value is one value of a parameter or body member: Text is its form in a
// query or path, JSON its form in a body.
type Value struct {
	Label string
	Text  string
	JSON  any
}

func intValue(label string, n *big.Int) Value {
	return Value{Label: label, Text: n.String(), JSON: json.Number(n.String())}
}

func strValue(label, s string) Value { return Value{Label: label, Text: s, JSON: s} }

// valid returns values the schema accepts: each enum value; an integer's
// minimum, maximum and one between; a string at its shortest and longest, in
// ASCII and not, and one between; null, when s is nullable.
func (g Values) Valid(s *openapi3.Schema) []Value {
	vs := g.nonNull(s)
	if f := Flat(s); f != nil && f.Nullable && !slices.ContainsFunc(vs, func(v Value) bool { return v.JSON == nil }) {
		vs = append(vs, Value{Label: "null", Text: "null", JSON: nil})
	}
	return vs
}

// nonNull are Valid's values but null.
func (g Values) nonNull(s *openapi3.Schema) []Value {
	s = Flat(s)
	switch {
	case s == nil:
		return nil
	case len(s.Enum) > 0:
		var vs []Value
		for _, e := range s.Enum {
			vs = append(vs, Value{Label: fmt.Sprintf("enum %v", e), Text: fmt.Sprint(e), JSON: e})
		}
		return vs
	case IsType(s, "integer"):
		lo, hi := IntBounds(s)
		mid := new(big.Int).Sub(hi, lo)
		mid.Rsh(mid, 1)
		if mid.IsInt64() && mid.Int64() > 0 {
			mid = big.NewInt(g.Rng.Int64N(min(mid.Int64(), 1_000_000)) + 1)
		}
		mid.Add(mid, lo)
		return []Value{intValue("minimum", lo), intValue("maximum", hi), intValue("between", mid)}
	case IsType(s, "string"):
		return g.validStrings(s)
	case IsType(s, "boolean"):
		return []Value{{Label: "true", Text: "true", JSON: true}, {Label: "false", Text: "false", JSON: false}}
	}
	return g.SchemaValues(s) // arrays, objects, numbers
}

// nonASCII is the alphabet of the non-ASCII names: two- to four-byte UTF-8.
var nonASCII = []rune("éßøπждשع猫犬🐈🐕")

func (g Values) validStrings(s *openapi3.Schema) []Value {
	if s.Format != "" {
		return g.SchemaValues(s) // a format's values, from the schema
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
			b[i] = set[g.Rng.IntN(len(set))]
		}
		return string(b)
	}
	candidates := []Value{
		strValue("shortest", gen(max(lo, 1), alpha)),
		strValue("longest", gen(hi, alpha)),
		strValue("longest, non-ASCII", gen(hi, nonASCII)),
		strValue("between, mixed", gen(lo+g.Rng.IntN(max(hi-lo, 1)), append(alpha, nonASCII...))),
	}
	if lo == 0 {
		candidates = append(candidates, strValue("empty", ""))
	}
	var vs []Value
	for _, v := range candidates {
		// A pattern may hold a string to fewer characters than maxLength
		// (a key of 255 in a field of 257 that allows two quotes): take
		// the longest it accepts, a few characters shorter at most.
		for cut := 0; cut < 4 && !StringOK(s, v.Text) && utf8.RuneCountInString(v.Text) > max(lo, 1); cut++ {
			rs := []rune(v.Text)
			v.Text = string(rs[:len(rs)-1])
			v.JSON = v.Text
		}
		if StringOK(s, v.Text) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 { // a pattern the alphabets do not meet: strings that match it, from the schema
		return g.SchemaValues(s)
	}
	return vs
}

// StringOK reports whether s accepts str: length in characters and pattern.
func StringOK(s *openapi3.Schema, str string) bool {
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
	re, err := regexp.Compile(schemagen.GoPattern(p))
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

// Invalid returns values that break exactly one rule of the schema each,
// labelled by the rule. inBody is whether they go in a JSON body, where a
// string is not a number and a number is not a string.
func Invalid(s *openapi3.Schema, inBody bool) []Value {
	s = Flat(s)
	if s == nil {
		return nil
	}
	var vs []Value
	switch {
	case IsType(s, "integer"):
		lo, hi := IntBounds(s)
		if lo.Cmp(minInt64) > 0 || s.Format == "int32" {
			vs = append(vs, intValue("below minimum", new(big.Int).Sub(lo, big.NewInt(1))))
		}
		vs = append(vs, intValue("above maximum", new(big.Int).Add(hi, big.NewInt(1))))
		vs = append(vs, Value{Label: "not an integer", Text: "1.5", JSON: json.Number("1.5")})
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
					Value{Label: "not canonical: fraction", JSON: json.Number(n.String() + ".0")},
					Value{Label: "not canonical: exponent", JSON: json.Number(n.String() + "e0")})
			} else {
				vs = append(vs,
					Value{Label: "not canonical: plus sign", Text: "+" + n.String()},
					Value{Label: "not canonical: leading zero", Text: "0" + n.String()})
			}
		}
		if !inBody && lo.Sign() <= 0 && hi.Sign() >= 0 {
			vs = append(vs, Value{Label: "not canonical: -0", Text: "-0"})
		}
		if inBody {
			vs = append(vs, Value{Label: "wrong type: string", JSON: "1"})
		} else {
			vs = append(vs, Value{Label: "wrong type: word", Text: "abc"})
		}
	case IsType(s, "string"):
		if inBody {
			vs = append(vs, Value{Label: "wrong type: number", JSON: json.Number("1")})
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
				if n := uint64(utf8.RuneCountInString(c)); n >= s.MinLength && (s.MaxLength == nil || n <= *s.MaxLength) && !StringOK(s, c) {
					vs = append(vs, strValue("against the pattern: "+strconv.Quote(c), c))
				}
			}
		}
	case IsType(s, "array"), IsType(s, "object"), IsType(s, "number"):
		vs = invalidNested(s) // values.go
	}
	if inBody && !IsType(s, "boolean") {
		vs = append(vs, Value{Label: "wrong type: boolean", JSON: true})
	}
	return vs
}

// The values of the schemas the kit's own cases do not spell out (arrays,
// objects, numbers, strings of a format or of a pattern its alphabets do not
// meet) come from the schema itself (internal/schemagen), drawn from the
// run's seed: valid ones at every bound, and ones that break one rule each.

// Values draws the values of schemas from a run's seed.
type Values struct{ Rng *rand.Rand }

// gen is a generator of values that takes its choices from the seed.
func (g Values) gen() *schemagen.Generator { return schemagen.New(g.Rng) }

// SchemaValues are the values of s at each of its bounds, from the schema.
func (g Values) SchemaValues(s *openapi3.Schema) []Value {
	cs, err := g.gen().Bounds(s)
	if err != nil {
		return nil // a schema nothing satisfies: no valid value to send
	}
	vs := make([]Value, 0, len(cs))
	for _, c := range cs {
		vs = append(vs, JSONCase(c.Label, c.Value))
	}
	return vs
}

// JSONCase is a value as a body member, and as text its string, or its
// JSON.
func JSONCase(label string, v any) Value {
	if s, ok := v.(string); ok {
		return Value{Label: label, Text: s, JSON: s}
	}
	return Value{Label: label, Text: string(MustJSON(v)), JSON: v}
}

// fixed draws the valid fillers of the invalid values: the same for the
// same schema, whatever the seed, as invalid's own values are.
func fixed() *schemagen.Generator { return schemagen.New(rand.New(rand.NewPCG(1, 2))) }

// invalidNested returns values that break exactly one rule of an array, an
// object or a number schema each: too few or too many items, an item twice
// where they must be distinct, one item that breaks a rule of the items; a
// required member left out, a member the schema does not name, one member
// that breaks a rule of its own; a number below or above its range; and a
// value of another type.
func invalidNested(s *openapi3.Schema) []Value {
	var vs []Value
	switch {
	case IsType(s, "array"):
		vs = invalidArray(s)
	case IsType(s, "object"):
		vs = invalidObject(s)
	case IsType(s, "number"):
		if s.Min != nil {
			below := *s.Min - math.Max(1, math.Abs(*s.Min)/2)
			if s.ExclusiveMin.IsTrue() {
				below = *s.Min
			}
			vs = append(vs, Value{Label: "below minimum", JSON: json.Number(strconv.FormatFloat(below, 'g', -1, 64))})
		}
		if s.Max != nil {
			above := *s.Max + math.Max(1, math.Abs(*s.Max)/2)
			if s.ExclusiveMax.IsTrue() {
				above = *s.Max
			}
			vs = append(vs, Value{Label: "above maximum", JSON: json.Number(strconv.FormatFloat(above, 'g', -1, 64))})
		}
	}
	return append(vs, Value{Label: "wrong type: string", JSON: "1"})
}

// items draws n distinct valid items of s's item schema.
func items(s *openapi3.Schema, n int) ([]any, bool) {
	item := &openapi3.Schema{}
	if s.Items != nil && s.Items.Value != nil {
		item = s.Items.Value
	}
	g := fixed()
	seen := map[string]bool{}
	var out []any
	for tries := 0; len(out) < n && tries < 40*n+40; tries++ {
		v, err := g.Value(item)
		if err != nil {
			return nil, false
		}
		c, err := value.Canonical(v, item) // distinct values once stored, not spellings
		if err == nil && !seen[string(c)] {
			seen[string(c)] = true
			out = append(out, v)
		}
	}
	return out, len(out) == n
}

func invalidArray(s *openapi3.Schema) []Value {
	var vs []Value
	if s.MinItems > 0 {
		if few, ok := items(s, int(s.MinItems)-1); ok {
			vs = append(vs, Value{Label: "too few items", JSON: append([]any{}, few...)})
		}
	}
	if s.MaxItems != nil && *s.MaxItems < 1<<10 {
		if many, ok := items(s, int(*s.MaxItems)+1); ok {
			vs = append(vs, Value{Label: "too many items", JSON: many})
		}
	}
	least := max(int(s.MinItems), 1)
	if s.UniqueItems && (s.MaxItems == nil || *s.MaxItems >= 2) {
		if some, ok := items(s, max(least-1, 1)); ok {
			vs = append(vs, Value{Label: "an item twice", JSON: append(some, some[0])})
		}
	}
	if s.Items != nil && s.Items.Value != nil && (s.MaxItems == nil || *s.MaxItems >= 1) {
		rest, ok := items(s, least-1)
		for _, bad := range Invalid(s.Items.Value, true) {
			if ok {
				vs = append(vs, Value{Label: "an item: " + bad.Label, JSON: append([]any{bad.JSON}, rest...)})
			}
		}
	}
	return vs
}

func invalidObject(s *openapi3.Schema) []Value {
	g := fixed()
	g.Members = schemagen.RequiredMembers
	base, err := g.Value(s)
	obj, ok := base.(map[string]any)
	if err != nil || !ok {
		return nil
	}
	with := func(name string, v any) map[string]any {
		c := make(map[string]any, len(obj)+1)
		for k, m := range obj {
			c[k] = m
		}
		if v == Absent {
			delete(c, name)
		} else {
			c[name] = v
		}
		return c
	}
	var vs []Value
	for _, name := range s.Required {
		vs = append(vs, Value{Label: fmt.Sprintf("%s: required, missing", name), JSON: with(name, Absent)})
	}
	if s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has {
		vs = append(vs, Value{Label: "an unknown member", JSON: with("conformUnknown", 1)})
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		if ref := s.Properties[name]; ref != nil && ref.Value != nil {
			for _, bad := range Invalid(ref.Value, true) {
				vs = append(vs, Value{Label: name + ": " + bad.Label, JSON: with(name, bad.JSON)})
			}
		}
	}
	return vs
}

// MustJSON is v as JSON; v is a value the kit built, which always encodes.
func MustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// Absent is the marker of a member left out of a body.
var Absent = &struct{}{}
