package value_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/strict"
	"github.com/petstore/petstore/internal/value"
)

// components are the schemas the tables name, loaded as a spec loads them
// ($ref resolved).
const components = `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {},
"components": {"schemas": {
  "Care": {"type": "object", "properties": {"level": {"type": "integer", "default": 3}, "note": {"type": "string"}}},
  "Nested": {"type": "object", "properties": {"care": {"$ref": "#/components/schemas/Care"}}},
  "Visits": {"type": "array", "items": {"type": "object", "properties": {
      "kind": {"type": "string", "default": "checkup"}, "at": {"type": "string", "format": "date-time"}}}},
  "Notes": {"type": "object", "additionalProperties": {"type": "object", "properties": {"seen": {"type": "boolean", "default": false}}}},
  "Merged": {"allOf": [{"$ref": "#/components/schemas/Care"}, {"type": "object", "properties": {"vet": {"type": "string", "default": "Dr. A"}}}]},
  "Cat": {"type": "object", "required": ["meow"], "properties": {"meow": {"type": "boolean"}, "lives": {"type": "integer", "default": 9}}},
  "Dog": {"type": "object", "required": ["bark"], "properties": {"bark": {"type": "boolean"}, "legs": {"type": "integer", "default": 4}}},
  "OneOf": {"type": "object", "properties": {"animal": {"oneOf": [{"$ref": "#/components/schemas/Cat"}, {"$ref": "#/components/schemas/Dog"}]}}},
  "AnyOf": {"type": "object", "properties": {"animal": {"anyOf": [{"$ref": "#/components/schemas/Dog"}, {"$ref": "#/components/schemas/Cat"}]}}},
  "Nullable": {"type": "object", "required": ["must"], "properties": {
      "maybe": {"type": "string", "nullable": true},
      "must": {"type": "string", "nullable": true},
      "either": {"type": "string", "nullable": true, "default": "x"}}},
  "Numbers": {"type": "object", "properties": {
      "f": {"type": "number", "format": "float"}, "d": {"type": "number", "format": "double"},
      "n": {"type": "number"}, "i": {"type": "integer", "format": "int32"}, "big": {"type": "integer"},
      "w": {"allOf": [{"type": "number", "format": "float"}], "description": "a float through allOf"}}}
}}}`

// schema is the component named name.
func schema(t testing.TB, name string) *openapi3.Schema {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(components))
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(openapi3.NewLoader().Context); err != nil {
		t.Fatal(err)
	}
	return doc.Components.Schemas[name].Value
}

func decode(t testing.TB, s string) any {
	t.Helper()
	v, err := value.Decode([]byte(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// TestNormalize: defaults at every depth, each scalar canonical by its
// schema, and the canonical JSON of the result.
func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ schema, in, want string }{
		// A nested default: an object member's members.
		{"Nested", `{"care":{}}`, `{"care":{"level":3}}`},
		{"Nested", `{}`, `{}`},
		{"Nested", `{"care":{"level":1,"note":"n"}}`, `{"care":{"level":1,"note":"n"}}`},
		// An array of objects with defaults, a date-time in each.
		{"Visits", `[{},{"kind":"x","at":"2020-01-01T01:00:00.500+01:00"}]`,
			`[{"kind":"checkup"},{"at":"2020-01-01T00:00:00.5Z","kind":"x"}]`},
		// The members an additionalProperties schema covers.
		{"Notes", `{"a":{},"b":{"seen":true}}`, `{"a":{"seen":false},"b":{"seen":true}}`},
		// allOf: every schema applies.
		{"Merged", `{}`, `{"level":3,"vet":"Dr. A"}`},
		// oneOf: the one branch the value validates against; anyOf: the first.
		{"OneOf", `{"animal":{"meow":true}}`, `{"animal":{"lives":9,"meow":true}}`},
		{"OneOf", `{"animal":{"bark":true}}`, `{"animal":{"bark":true,"legs":4}}`},
		{"OneOf", `{"animal":{"bark":true,"meow":true}}`, `{"animal":{"bark":true,"meow":true}}`}, // both: no branch
		{"AnyOf", `{"animal":{"bark":true,"meow":true}}`, `{"animal":{"bark":true,"legs":4,"meow":true}}`},
		// nullable: null of an optional member without a default is absence;
		// a required one, or one with a default, keeps its null.
		{"Nullable", `{"maybe":null,"must":null,"either":null}`, `{"either":null,"must":null}`},
		{"Nullable", `{"must":"m"}`, `{"either":"x","must":"m"}`},
		// Numbers by format.
		{"Numbers", `{"f":3.4028234663852886e+38,"d":0.1000000000000000055511151231257827,"n":1.0e1,"i":-0,"big":123456789012345678901234567890}`,
			`{"big":123456789012345678901234567890,"d":0.1,"f":3.4028235e+38,"i":0,"n":10}`},
		{"Numbers", `{"f":0.1,"w":16777217,"n":1000000000000000000000,"d":1e21}`, `{"d":1e+21,"f":0.1,"n":1e+21,"w":16777216}`},
		{"Numbers", `{"n":9007199254740993.0,"f":1e-50}`, `{"f":0,"n":9007199254740993}`},
	} {
		got, err := value.Canonical(decode(t, tc.in), schema(t, tc.schema))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s %s:\n got %s, %v\nwant %s", tc.schema, tc.in, got, err, tc.want)
		}
	}
}

// TestRefused: a request's values its schema's rules refuse, each a
// *strict.Error naming the member.
func TestRefused(t *testing.T) {
	for _, tc := range []struct{ schema, in, member string }{
		{"Numbers", `{"f":3.5e38}`, "f: number must be within the range of a float"},
		{"Numbers", `{"f":-1e39}`, "f: number must be within the range of a float"},
		{"Numbers", `{"d":2e308}`, "d: number must be within the range of a double"},
		{"Numbers", `{"i":1.0}`, "i: must be an integer"},
		{"Numbers", `{"i":2147483648}`, "i: number must be at most 2147483647"},
		{"Numbers", `{"big":1e30}`, "big: must be an integer"},
		{"Numbers", `{"n":1e1000000000000000}`, "n: not a number"},
		{"Visits", `[{"at":"2020-02-30T00:00:00Z"}]`, "[0].at: must be an RFC 3339 date-time"},
		{"Visits", `[{},{"at":"2016-12-31T23:59:60Z"}]`, "[1].at: must be an RFC 3339 date-time"},
		{"Visits", `[{"at":"9999-12-31T23:00:00-01:00"}]`, "[0].at: must be"},
		{"Visits", `[{"at":"2020-01-01T00:00:00+24:00"}]`, "[0].at: must be"},
		{"Visits", `[{"at":"2020-01-01"}]`, "[0].at: must be"},
	} {
		_, err := value.Normalize(decode(t, tc.in), schema(t, tc.schema))
		var serr *strict.Error
		if !errors.As(err, &serr) || !strings.HasPrefix(serr.Message, tc.member) {
			t.Errorf("%s %s: got %v, want a refusal %q…", tc.schema, tc.in, err, tc.member)
		}
	}
}

// TestDateTimes: one instant, whatever its offset and the zeros of its
// fraction; to the nanosecond.
func TestDateTimes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"2020-01-01T00:00:00Z", "2020-01-01T00:00:00Z"},
		{"2020-01-01T00:00:00-00:00", "2020-01-01T00:00:00Z"},
		{"2020-01-01T00:00:00.000+00:00", "2020-01-01T00:00:00Z"},
		{"2020-01-01T05:30:00.1200+05:30", "2020-01-01T00:00:00.12Z"},
		{"2019-12-31t23:00:00.123456789123-01:00", "2020-01-01T00:00:00.123456789Z"},
		{"0001-01-01T00:00:00+14:45", "0000-12-31T09:15:00Z"},
		{"2016-02-29T12:00:00z", "2016-02-29T12:00:00Z"},
	} {
		tm, err := value.ParseDateTime(tc.in)
		if got := value.FormatDateTime(tm); err != nil || got != tc.want {
			t.Errorf("%s: got %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

// TestAnswered: an answer's value is compared by the same rules, without
// the defaults it must show, and never refused; an integer not in plain
// digits is kept as it is, and so differs from every integer.
func TestAnswered(t *testing.T) {
	for _, tc := range []struct{ schema, in, want string }{
		{"Nested", `{"care":{}}`, `{"care":{}}`},
		{"Numbers", `{"f":3.4028235e+38,"i":1,"n":1e1,"d":1e400}`, `{"d":1e+400,"f":3.4028235e+38,"i":1,"n":10}`},
		// An integer is answered in plain digits: 1.0 is kept, and differs.
		{"Numbers", `{"i":1.0,"big":1e30}`, `{"big":1e30,"i":1.0}`},
		{"Visits", `[{"at":"2020-02-30T00:00:00Z"},{"at":"2020-01-01T00:00:00+00:00"}]`, `[{"at":"2020-02-30T00:00:00Z"},{"at":"2020-01-01T00:00:00Z"}]`},
		{"Nullable", `{"maybe":null,"must":null}`, `{"must":null}`},
	} {
		got, err := value.Append(nil, value.Answered(decode(t, tc.in), schema(t, tc.schema)))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s %s: got %s, %v; want %s", tc.schema, tc.in, got, err, tc.want)
		}
	}
}

// TestPlain: the fingerprint's form leaves out every member at its
// default, at every depth, sent or not.
func TestPlain(t *testing.T) {
	for _, tc := range []struct{ schema, in, want string }{
		{"Nested", `{"care":{}}`, `{"care":{}}`},
		{"Nested", `{"care":{"level":3}}`, `{"care":{}}`},
		{"Nested", `{"care":{"level":4}}`, `{"care":{"level":4}}`},
		{"Visits", `[{"kind":"checkup"},{}]`, `[{},{}]`},
		{"Notes", `{"a":{"seen":false}}`, `{"a":{}}`},
		{"Merged", `{"level":3,"vet":"Dr. A"}`, `{}`},
		{"OneOf", `{"animal":{"meow":true,"lives":9}}`, `{"animal":{"meow":true}}`},
		{"Nullable", `{"must":"m","either":"x"}`, `{"must":"m"}`},
		{"Nullable", `{"must":"m","either":null}`, `{"either":null,"must":"m"}`},
	} {
		v, err := value.Plain(decode(t, tc.in), schema(t, tc.schema))
		got, _ := value.Append(nil, v)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s %s: got %s, %v; want %s", tc.schema, tc.in, got, err, tc.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	d := value.Defaults(schema(t, "Merged"))
	if len(d) != 2 || value.Text(d["level"]) != "3" || d["vet"] != "Dr. A" {
		t.Errorf("got %v", d)
	}
	if d, ok := value.Default(schema(t, "Care").Properties["level"].Value); !ok || value.Text(d) != "3" {
		t.Errorf("Care.level: got %v, %v", d, ok)
	}
	if !value.Equal(decode(t, `{"care":{}}`), decode(t, `{"care":{"level":3}}`), schema(t, "Nested")) {
		t.Error("a member left out and the same member at its default: not equal")
	}
}

func TestTextOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"b":1,"a":[true,null,"x"]}`, `{"a":[true,null,"x"],"b":1}`},
		{` { "a" : "\u00e9\/\"\\\n\u001f<>&\u2028" } `, "{\"a\":\"é/\\\"\\\\\\n\\u001f<>&\u2028\"}"},
		{`9223372036854775807`, `9223372036854775807`},
		{`-0`, `0`},
		{`1.0`, `1`},
		{`1e0`, `1`},
		{`1e21`, `1e+21`},
		{`0.0000001`, `1e-7`},
		{`123456.789`, `123456.789`},
		{`{"\ud83d\ude00":1,"\ufb33":2}`, "{\"\U0001F600\":1,\"\ufb33\":2}"}, // UTF-16 order: the surrogate pair first
	} {
		got, err := value.TextOf([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("TextOf(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	if _, err := value.TextOf([]byte(`{} {}`)); err == nil {
		t.Error("trailing data: no error")
	}
}
