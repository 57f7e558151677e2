// Package value is the one meaning of a JSON value of the contract, read
// from its schema: what a value is once its schema's defaults are applied
// (Normalize), the one canonical form of each (Canonical), when two values
// are the same (Equal), how an answer's value is compared with a request's
// (Answered), and what a keyed create's fingerprint hashes (Plain). The
// server's normalisation, the fingerprint, the stores' text, the kit's
// values and judgements and the chaos audit all use it, and no other package
// applies defaults, writes numbers canonically or compares JSON values
// (TestOneMeaning holds the module to it).
//
// The rules, which openapi.yaml states (info.x-rules values):
//
//   - defaults apply at every depth: the members of objects (properties, and
//     the members an additionalProperties schema covers), the items of
//     arrays; allOf's schemas all apply, in order, the schema's own first;
//     of oneOf's, the one the value validates against; of anyOf's, the first
//     it validates against, in order;
//   - an integer is the same integer, written in plain digits; a request's
//     is held to the letter (no fraction, no exponent, within its format;
//     beyond int64 only without a format);
//   - a number without a format is its exact decimal value (1, 1.0 and 1e0
//     are one value); format float is the value rounded to the nearest
//     float32, double to the nearest float64, refused beyond their range;
//   - a string is the same code points; format date-time (RFC 3339) is the
//     same instant, whatever its offset (-00:00 is UTC), to the nanosecond,
//     written in UTC with trailing zeros of the fraction dropped
//     (2006-01-02T15:04:05.5Z); other formats the same text;
//   - arrays are the same items in order; objects the same members in any
//     order;
//   - null of a member that is optional and has no default is the member
//     left out; with a default, null is a value of its own.
//
// A value is what strict.DecodeJSON or Decode make of JSON text:
// map[string]any, []any, string, json.Number, bool or nil. Normalize,
// Answered and Plain take the maps and slices of the value they are given
// for their own: pass a Copy to keep one.
package value

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/strict"
	"github.com/petstore/petstore/internal/value/canon"
)

// Decode reads data, exactly one JSON value, its numbers exact.
func Decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("value: trailing data after the JSON value")
	}
	return v, nil
}

// Normalize is v, a request's value of s, as the contract reads it: the
// defaults of what it leaves out applied at every depth, each scalar in the
// canonical form its schema gives it. Its error, a *strict.Error naming the
// member, is a refusal: an integer with a fraction or an exponent, or
// beyond its format; a float or double beyond its range; a date-time that
// names no instant canon can write. s nil: every number is its exact value.
func Normalize(v any, s *openapi3.Schema) (any, error) {
	one := [1]*openapi3.Schema{s}
	return walker{mode: request}.walk(v, one[:s2n(s)], "")
}

// s2n is the number of schemas s makes: none for nil.
func s2n(s *openapi3.Schema) int {
	if s == nil {
		return 0
	}
	return 1
}

// Answered is v, an answer's value of s, in the form it is compared with a
// request's normalised value in: each scalar canonical by its schema where
// it reads as one (else as it is, which then differs), null of an optional
// member without a default left out; no default applied, for an answer must
// show what it stored. Never refused.
func Answered(v any, s *openapi3.Schema) any {
	v, _ = walker{mode: answer}.walk(v, schemas(s), "")
	return v
}

// Plain is v, a request's value of s, normalised (Normalize), with every
// member at its default left out, at every depth: what a request that
// leaves them out means too. A fingerprint of it is kept by a default the
// spec adds later, anywhere.
func Plain(v any, s *openapi3.Schema) (any, error) {
	v, err := Normalize(v, s)
	if err != nil {
		return nil, err
	}
	return walker{mode: request}.strip(v, schemas(s)), nil
}

// Canonical is v normalised by s (Normalize, on a copy) in canonical JSON:
// two values of s are the same value exactly when their Canonical are the
// same bytes.
func Canonical(v any, s *openapi3.Schema) ([]byte, error) {
	n, err := Normalize(Copy(v), s)
	if err != nil {
		return nil, err
	}
	return Append(nil, n)
}

// Append appends v, a value Normalize, Answered or Plain returned, in
// canonical JSON, its numbers as those wrote them.
func Append(b []byte, v any) ([]byte, error) { return canon.AppendAsIs(b, v) }

// NormalText is v, a value Normalize, Answered or Plain returned, in
// canonical JSON (Append); one Append cannot write as Text writes it.
func NormalText(v any) string {
	b, err := Append(nil, v)
	if err != nil {
		return Text(v)
	}
	return string(b)
}

// Text is v in canonical JSON, schema-free (every number its exact value);
// a value canon cannot write (a string not UTF-8) as encoding/json writes
// it, so that it differs from every canonical text.
func Text(v any) string {
	b, err := canon.Append(nil, v)
	if err != nil {
		b, _ = json.Marshal(v)
	}
	return string(b)
}

// TextOf is the JSON text data in canonical form, schema-free.
func TextOf(data []byte) ([]byte, error) {
	v, err := Decode(data)
	if err != nil {
		return nil, err
	}
	return canon.Append(nil, v)
}

// Equal reports whether a and b are the same value of s: the same
// Canonical. A value s refuses equals nothing.
func Equal(a, b any, s *openapi3.Schema) bool {
	ca, err1 := Canonical(a, s)
	cb, err2 := Canonical(b, s)
	return err1 == nil && err2 == nil && bytes.Equal(ca, cb)
}

// Shows reports whether answer, an answer's value of s, shows sent, a
// request's value of s, as it was sent: the same value once sent is
// normalised (its defaults applied) and answer read as an answer
// (Answered: no default added).
func Shows(answer, sent any, s *openapi3.Schema) bool {
	want, err := Canonical(sent, s)
	if err != nil {
		return false
	}
	got, err := Append(nil, Answered(Copy(answer), s))
	return err == nil && bytes.Equal(got, want)
}

// Default is s's default (its own, or its allOf's first), normalised by s,
// and whether it has one.
func Default(s *openapi3.Schema) (any, bool) {
	return defaultOf(schemas(s))
}

// Defaults are the defaults of the members of an object schema, by name
// (Default of each).
func Defaults(s *openapi3.Schema) map[string]any {
	out := map[string]any{}
	facets := flatten(schemas(s))
	for _, name := range propertyNames(facets) {
		if d, ok := defaultOf(memberSchemas(facets, name)); ok {
			out[name] = d
		}
	}
	return out
}

// Copy is a deep copy of v: no map or slice shared.
func Copy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := maps.Clone(v)
		for k, e := range m {
			m[k] = Copy(e)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = Copy(e)
		}
		return s
	}
	return v
}

func schemas(s *openapi3.Schema) []*openapi3.Schema {
	if s == nil {
		return nil
	}
	return []*openapi3.Schema{s}
}

// The modes of a walk.
type mode uint8

const (
	request mode = iota // defaults applied, integers to the letter, refusals
	answer              // no defaults, nothing refused
)

// walker walks a value beside the schemas it must keep.
type walker struct{ mode mode }

// walk is v, a value of every schema of ss, normalised; path names it in
// a refusal.
func (w walker) walk(v any, ss []*openapi3.Schema, path string) (any, error) {
	facets := w.facets(v, ss)
	switch x := v.(type) {
	case map[string]any:
		return w.object(x, facets, path)
	case []any:
		items := itemSchemas(facets)
		for i, e := range x {
			var err error
			if x[i], err = w.walk(e, items, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return nil, err
			}
		}
		return x, nil
	case json.Number:
		n, err := w.number(x, facets, path)
		if err != nil || n == x {
			return v, err // unchanged: v, not a new interface value
		}
		return n, nil
	case string:
		if s, err := w.str(x, facets, path); err != nil || s != x {
			return s, err
		}
	}
	return v, nil
}

// facets are the schemas that say what v is: each of ss, its allOf's
// (recursively, each schema before its allOf), and the branch of each
// oneOf and anyOf among them that v, as it came, validates against.
func (w walker) facets(v any, ss []*openapi3.Schema) []*openapi3.Schema {
	facets := flatten(ss)
	if !slices.ContainsFunc(facets, func(f *openapi3.Schema) bool { return len(f.OneOf) > 0 || len(f.AnyOf) > 0 }) {
		return facets
	}
	facets = slices.Clone(facets)      // flatten may have returned ss itself
	for i := 0; i < len(facets); i++ { // branches add facets, walked in turn
		f := facets[i]
		if b := w.branch(v, f.OneOf, true); b != nil {
			facets = append(facets, flatten(schemas(b))...)
		}
		if b := w.branch(v, f.AnyOf, false); b != nil {
			facets = append(facets, flatten(schemas(b))...)
		}
	}
	return facets
}

// maxFacets bounds the schemas flatten follows: an allOf that names itself
// through a $ref ends there.
const maxFacets = 64

// flatten is ss and their allOf's schemas, recursively, each before its
// allOf.
func flatten(ss []*openapi3.Schema) []*openapi3.Schema {
	if len(ss) == 1 && ss[0] != nil {
		if len(ss[0].AllOf) == 0 {
			return ss // the common case, without allocating
		}
		if c, ok := flatOf.Load(ss[0]); ok && c.(flat).allOf == len(ss[0].AllOf) {
			return c.(flat).facets
		}
	}
	var out []*openapi3.Schema
	for _, s := range ss {
		out = appendFlat(out, s)
	}
	if len(ss) == 1 && ss[0] != nil {
		flatOf.Store(ss[0], flat{out, len(ss[0].AllOf)})
	}
	return out
}

// flatOf caches flatten of one schema with an allOf, by schema (read again
// when its allOf changes).
var flatOf sync.Map // *openapi3.Schema → flat

type flat struct {
	facets []*openapi3.Schema
	allOf  int
}

func appendFlat(out []*openapi3.Schema, s *openapi3.Schema) []*openapi3.Schema {
	if s == nil || len(out) >= maxFacets {
		return out
	}
	out = append(out, s)
	for _, a := range s.AllOf {
		if a != nil {
			out = appendFlat(out, a.Value)
		}
	}
	return out
}

// branch is the schema of alts that v validates against: with one, the
// only one (none when two do: v keeps no oneOf); else the first.
func (w walker) branch(v any, alts openapi3.SchemaRefs, one bool) *openapi3.Schema {
	if len(alts) == 0 {
		return nil
	}
	opt := openapi3.VisitAsRequest()
	if w.mode == answer {
		opt = openapi3.VisitAsResponse()
	}
	var found *openapi3.Schema
	for _, a := range alts {
		if a == nil || a.Value == nil || a.Value.VisitJSON(v, opt) != nil {
			continue
		}
		if !one {
			return a.Value
		}
		if found != nil {
			return nil
		}
		found = a.Value
	}
	return found
}

// object normalises the members of m, a value of every facet.
func (w walker) object(m map[string]any, facets []*openapi3.Schema, path string) (any, error) {
	names := propertyNames(facets)
	for _, name := range names {
		ms := memberSchemas(facets, name)
		mv, ok := m[name]
		if !ok {
			if w.mode == request {
				if d, ok := defaultOf(ms); ok {
					m[name] = d
				}
			}
			continue
		}
		mv, err := w.walk(mv, ms, join(path, name))
		if err != nil {
			return nil, err
		}
		if mv == nil && !hasDefault(ms) && !required(facets, name) {
			delete(m, name) // null of an optional member without a default: left out
			continue
		}
		m[name] = mv
	}
	more := additionalSchemas(facets)
	for name, mv := range m {
		if containsSorted(names, name) {
			continue
		}
		var err error
		if m[name], err = w.walk(mv, more, join(path, name)); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// itemSchemas are the schemas the facets give an array's items.
func itemSchemas(facets []*openapi3.Schema) []*openapi3.Schema {
	var out []*openapi3.Schema
	for _, f := range facets {
		if f.Items != nil && f.Items.Value != nil {
			out = append(out, f.Items.Value)
		}
	}
	return out
}

// additionalSchemas are the schemas the facets' additionalProperties give
// the members their properties do not name.
func additionalSchemas(facets []*openapi3.Schema) []*openapi3.Schema {
	var out []*openapi3.Schema
	for _, f := range facets {
		if ap := f.AdditionalProperties.Schema; ap != nil && ap.Value != nil {
			out = append(out, ap.Value)
		}
	}
	return out
}

// propertyNamesOf caches the sorted names of a schema's properties.
// propertyNamesOf caches the sorted names of a schema's properties, and
// one-element slices of their schemas, by schema: a request walks the
// same schemas every time. A schema whose properties change (a test's,
// evolving a spec) is read again.
var propertyNamesOf sync.Map // *openapi3.Schema → *properties

type properties struct {
	names   []string
	schemas map[string][]*openapi3.Schema
}

func propertiesOf(f *openapi3.Schema) *properties {
	if c, ok := propertyNamesOf.Load(f); ok && len(c.(*properties).schemas) == len(f.Properties) {
		return c.(*properties)
	}
	c := &properties{names: slices.Sorted(maps.Keys(f.Properties)), schemas: map[string][]*openapi3.Schema{}}
	for name, p := range f.Properties {
		c.schemas[name] = []*openapi3.Schema{nil}
		if p != nil {
			c.schemas[name][0] = p.Value
		}
	}
	propertyNamesOf.Store(f, c)
	return c
}

// propertyNames are the names of the facets' properties, sorted.
func propertyNames(facets []*openapi3.Schema) []string {
	if len(facets) == 1 {
		return propertiesOf(facets[0]).names
	}
	var out []string
	for _, f := range facets {
		out = append(out, propertiesOf(f).names...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// memberSchemas are the schemas the facets give member name.
func memberSchemas(facets []*openapi3.Schema, name string) []*openapi3.Schema {
	if len(facets) == 1 {
		if ms := propertiesOf(facets[0]).schemas[name]; len(ms) == 1 && ms[0] != nil {
			return ms
		}
		return nil
	}
	var out []*openapi3.Schema
	for _, f := range facets {
		if p := f.Properties[name]; p != nil && p.Value != nil {
			out = append(out, p.Value)
		}
	}
	return out
}

// required reports whether a facet requires member name.
func required(facets []*openapi3.Schema, name string) bool {
	for _, f := range facets {
		if slices.Contains(f.Required, name) {
			return true
		}
	}
	return false
}

// hasDefault reports whether ss or their allOf's give a default.
func hasDefault(ss []*openapi3.Schema) bool {
	return slices.ContainsFunc(flatten(ss), func(f *openapi3.Schema) bool { return f.Default != nil })
}

func containsSorted(names []string, name string) bool {
	_, ok := slices.BinarySearch(names, name)
	return ok
}

// defaultOf is the first default of ss and their allOf's, normalised by
// ss (a default ss refuses as it is given), and whether there is one.
func defaultOf(ss []*openapi3.Schema) (any, bool) {
	for _, f := range flatten(ss) {
		if f.Default == nil {
			continue
		}
		d := FromSpec(f.Default)
		if n, err := (walker{mode: request}).walk(Copy(d), ss, ""); err == nil {
			return n, true
		}
		return d, true
	}
	return nil, false
}

// FromSpec is a value of a loaded spec (a default, an enum value: YAML's
// numbers are float64 or int) as a decoded JSON value, numbers json.Number.
func FromSpec(v any) any {
	switch v := v.(type) {
	case float64:
		return json.Number(strconv.FormatFloat(v, 'g', -1, 64))
	case float32:
		return json.Number(strconv.FormatFloat(float64(v), 'g', -1, 32))
	case int:
		return json.Number(strconv.Itoa(v))
	case int64:
		return json.Number(strconv.FormatInt(v, 10))
	case uint64:
		return json.Number(strconv.FormatUint(v, 10))
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = FromSpec(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = FromSpec(e)
		}
		return out
	}
	return v
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// refuse is a refusal of the value at path.
func refuse(path, format string, args ...any) *strict.Error {
	if path == "" {
		path = "value"
	}
	return &strict.Error{Message: fmt.Sprintf("%.64s: ", path) + fmt.Sprintf(format, args...)}
}
