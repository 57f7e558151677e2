package canon

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"
)

func decode(t interface {
	Helper()
	Fatalf(string, ...any)
}, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

func TestAppend(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"b":1,"a":[true,false,null]}`, `{"a":[true,false,null],"b":1}`},
		{`{ "x" : "a\u0000\u001f\b\t\n\f\r\"\\/<>&\u2028é😀" }`, `{"x":"a\u0000\u001f\b\t\n\f\r\"\\/<>&` + "\u2028é😀" + `"}`},
		{`"\ud83d\ude00"`, `"😀"`},
		// Numbers exact, whatever their size, in RFC 8785's layout; -0 is 0.
		{`9223372036854775807`, `9223372036854775807`},
		{`-9223372036854775808`, `-9223372036854775808`},
		{`123456789012345678901234567890`, `1.2345678901234567890123456789e+29`},
		{`9007199254740993.0`, `9007199254740993`}, {`1000000000000000000000`, `1e+21`},
		{`-0`, `0`}, {`1e1000000`, `1e+1000000`}, {`-1.10e-1000000`, `-1.1e-1000000`},
		{`1.0`, `1`}, {`1.50`, `1.5`}, {`15e-1`, `1.5`}, {`-0.0`, `0`}, {`1e21`, `1e+21`}, {`1e20`, `100000000000000000000`},
		{`1E-7`, `1e-7`}, {`0.000001`, `0.000001`}, {`1.7976931348623157e308`, `1.7976931348623157e+308`},
		{`5e-324`, `5e-324`}, {`123.456e2`, `12345.6`}, {`0.30000000000000000001`, `0.30000000000000000001`},
		// Names sorted by UTF-16 code units: U+1D518 (D835 DD18) before U+FF5A.
		{`{"ｚ":1,"𝔘":2,"a":3,"":4,"aa":5}`, `{"":4,"a":3,"aa":5,"𝔘":2,"ｚ":1}`},
		{`[]`, `[]`}, {`{}`, `{}`}, {`{"a":{"d":1,"c":[{"f":1,"e":2}]}}`, `{"a":{"c":[{"e":2,"f":1}],"d":1}}`},
	} {
		got, err := Append(nil, decode(t, tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: got %s, %v; want %s", tc.in, got, err, tc.want)
		}
		if err := Object(string(got)); strings.HasPrefix(tc.want, "{") && err != nil {
			t.Errorf("Object(%s): %v", got, err)
		}
	}
	for _, bad := range []any{math.NaN(), math.Inf(1), "\xff", map[string]any{"\xff": 1}, struct{}{}} {
		if b, err := Append(nil, bad); err == nil {
			t.Errorf("Append(%#v) = %s, want an error", bad, b)
		}
	}
	for _, bad := range []json.Number{"1e1000000000000000", "01", "1.", ".5", "1e", "+1", "--1", "1e+-1", ""} {
		if b, err := Append(nil, bad); err == nil {
			t.Errorf("%q: got %s, want an error", bad, b)
		}
	}
}

func TestObject(t *testing.T) {
	for _, ok := range []string{`{"a":1e+21}`, `{"a":1000000000000000000000}`, `{"a":[1.5,-2e-7]}`} {
		if err := Object(ok); err != nil {
			t.Errorf("Object(%s): %v", ok, err)
		}
	}
	for _, bad := range []string{`[1]`, `{"b":1,"a":2}`, `{"a": 1}`, `{"a":1.0}`, `{"a":1e21}`, `{"a":15e-1}`, `{"a":"\u003c"}`, `{"a":1,"a":1}`, `{"a":1}x`, `{"a":1} `, "{\"a\":\"\xff\"}", `{`} {
		if err := Object(bad); err == nil {
			t.Errorf("Object(%s): want an error", bad)
		}
	}
}

func TestCompare(t *testing.T) {
	names := []string{"b", "a", "", "ab", "\uffff", "\U0001F600", "\U00010000", "\ue000", "Z", "é"}
	slices.SortFunc(names, Compare)
	want := []string{"", "Z", "a", "ab", "b", "é", "\U00010000", "\U0001F600", "\ue000", "\uffff"}
	if !slices.Equal(names, want) {
		t.Errorf("got %q, want %q", names, want)
	}
}

// value draws a JSON value as strict.DecodeJSON decodes one.
func value(t *rapid.T, depth int) any {
	kinds := 5
	if depth < 3 {
		kinds = 7
	}
	switch rapid.IntRange(0, kinds-1).Draw(t, "kind") {
	case 0:
		return nil
	case 1:
		return rapid.Bool().Draw(t, "bool")
	case 2:
		return rapid.String().Draw(t, "string")
	case 3:
		return json.Number(rapid.SampledFrom([]string{"0", "-1", "9223372036854775807", "1.5", "-2e-9", "1e21"}).Draw(t, "number"))
	case 4:
		return json.Number(strconv.FormatInt(rapid.Int64().Draw(t, "int"), 10))
	case 5:
		n := rapid.IntRange(0, 4).Draw(t, "items")
		out := make([]any, n)
		for i := range out {
			out[i] = value(t, depth+1)
		}
		return out
	}
	m := map[string]any{}
	for range rapid.IntRange(0, 4).Draw(t, "members") {
		m[rapid.String().Draw(t, "name")] = value(t, depth+1)
	}
	return m
}

// TestRoundTrip: canonical JSON decodes to the value it was made from,
// is its own canonical form, holds no raw control character (so never a
// NUL byte), and Members walks an object's members in order.
func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := map[string]any{"v": value(t, 0), rapid.String().Draw(t, "name"): value(t, 0)}
		b, err := Append(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if !utf8.ValidString(s) {
			t.Fatalf("%q: not UTF-8", s)
		}
		for i := 0; i < len(s); i++ {
			if s[i] < 0x20 {
				t.Fatalf("%q: a raw control character at %d", s, i)
			}
		}
		if err := Object(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		again, err := Append(nil, decode(t, s))
		if err != nil || string(again) != s {
			t.Fatalf("again: %s, %v; want %s", again, err, s)
		}
		m := MembersOf(s)
		walked := m.AppendRest([]byte{'{'})
		walked[len(walked)-1] = '}'
		if string(walked) != s {
			t.Fatalf("walked %s, want %s", walked, s)
		}
		names := Names(s)
		if !slices.IsSortedFunc(names, Compare) || len(names) != len(v) {
			t.Fatalf("names %q of %s", names, s)
		}
		// Every name is split where it sorts.
		for _, name := range names {
			m := MembersOf(s)
			before := m.AppendBefore(nil, name)
			rest := m.AppendRest(nil)
			if string(before)+string(rest) != s[1:len(s)-1]+"," {
				t.Fatalf("split at %q: %s + %s, want %s", name, before, rest, s)
			}
		}
	})
}
