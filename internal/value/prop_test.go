package value_test

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"pgregory.net/rapid"

	"github.com/petstore/petstore/internal/schemagen"
	"github.com/petstore/petstore/internal/schemagen/schematest"
	"github.com/petstore/petstore/internal/value"
)

// text is v, a normalised value, as canonical JSON.
func text(t *rapid.T, v any) string {
	b, err := value.Append(nil, v)
	if err != nil {
		t.Fatalf("%v: %v", v, err)
	}
	return string(b)
}

// TestNormalizeProperties: for values schemagen draws from each schema of
// the tables, normalising is idempotent, Canonical is its own canonical
// form, an answer showing the normalised value is the same value, and
// Plain depends on the normalised value alone.
func TestNormalizeProperties(t *testing.T) {
	names := []string{"Nested", "Visits", "Notes", "Merged", "OneOf", "AnyOf", "Nullable", "Numbers"}
	ss := map[string]*openapi3.Schema{}
	for _, n := range names {
		ss[n] = schema(t, n)
	}
	rapid.Check(t, func(t *rapid.T) {
		s := ss[rapid.SampledFrom(names).Draw(t, "schema")]
		v, err := schemagen.New(schematest.Rapid(t)).Value(s)
		if err != nil {
			t.Fatal(err)
		}
		n1, err := value.Normalize(value.Copy(v), s)
		if err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		once := text(t, n1)
		n2, err := value.Normalize(value.Copy(n1), s)
		if err != nil || text(t, n2) != once {
			t.Fatalf("%s normalised again: %v, %v", once, n2, err)
		}
		if c, err := value.Canonical(v, s); err != nil || string(c) != once {
			t.Fatalf("Canonical %s, %v; want %s", c, err, once)
		}
		if again, _ := value.TextOf([]byte(once)); string(again) != once && !hasBigInteger(n1) {
			t.Fatalf("%s is not its own canonical text: %s", once, again)
		}
		if a := text(t, value.Answered(value.Copy(n1), s)); a != once {
			t.Fatalf("answered %s, want %s", a, once)
		}
		p1, err1 := value.Plain(value.Copy(v), s)
		p2, err2 := value.Plain(value.Copy(n1), s)
		if err1 != nil || err2 != nil || text(t, p1) != text(t, p2) {
			t.Fatalf("Plain of %v: %v, %v; of its normal form %v, %v", v, p1, err1, p2, err2)
		}
	})
}

// hasBigInteger reports whether v holds an integer written in plain digits
// past 1e21, which schema-free text writes in the number layout.
func hasBigInteger(v any) bool {
	switch v := v.(type) {
	case json.Number:
		return len(v) > 21
	case []any:
		for _, e := range v {
			if hasBigInteger(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range v {
			if hasBigInteger(e) {
				return true
			}
		}
	}
	return false
}

// TestFloatRule: two numbers are the same float exactly when they round to
// the same float32, and the same double when they round to the same
// float64; the same number (no format) when they are the same decimal.
func TestFloatRule(t *testing.T) {
	nums := schema(t, "Numbers").Properties
	f, d, n := nums["f"].Value, nums["d"].Value, nums["n"].Value
	rapid.Check(t, func(t *rapid.T) {
		x := math.Float64frombits(rapid.Uint64().Draw(t, "x"))
		if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > math.MaxFloat32 {
			t.Skip("beyond float32")
		}
		a := json.Number(strconv.FormatFloat(x, 'g', -1, 64))
		var b json.Number
		if rapid.Bool().Draw(t, "near") {
			b = json.Number(strconv.FormatFloat(float64(math.Nextafter32(float32(x), float32(math.Inf(1)))), 'g', -1, 64))
		} else {
			b = json.Number(strconv.FormatFloat(float64(float32(x)), 'g', -1, 32))
		}
		fa, _ := strconv.ParseFloat(string(a), 32)
		fb, _ := strconv.ParseFloat(string(b), 32)
		if got := value.Equal(a, b, f); got != (fa == fb) {
			t.Fatalf("float %s and %s: equal %v, want %v", a, b, got, fa == fb)
		}
		da, _ := strconv.ParseFloat(string(a), 64)
		db, _ := strconv.ParseFloat(string(b), 64)
		if got := value.Equal(a, b, d); got != (da == db) {
			t.Fatalf("double %s and %s: equal %v, want %v", a, b, got, da == db)
		}
		ra, _ := new(big.Rat).SetString(string(a))
		rb, _ := new(big.Rat).SetString(string(b))
		if got := value.Equal(a, b, n); got != (ra.Cmp(rb) == 0) {
			t.Fatalf("number %s and %s: equal %v, want %v", a, b, got, ra.Cmp(rb) == 0)
		}
		c, _ := value.Canonical(a, f)
		if back, err := strconv.ParseFloat(string(c), 32); err != nil || float32(back) != float32(fa) {
			t.Fatalf("float %s written %s: reads back as %v, want %v", a, c, back, float32(fa))
		}
	})
}

// TestDateTimeRule: two date-times are the same exactly when they name the
// same instant (as time.Parse reads them), whatever their offsets and
// fractions; the canonical one names it too.
func TestDateTimeRule(t *testing.T) {
	s := &openapi3.Schema{Type: &openapi3.Types{"string"}, Format: "date-time"}
	spell := func(t *rapid.T, at time.Time, name string) string {
		off := rapid.IntRange(-14*60, 14*60).Draw(t, name+" offset")
		layout := rapid.SampledFrom([]string{"2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05.000000000Z07:00", "2006-01-02T15:04:05.999Z07:00"}).Draw(t, name+" layout")
		return at.In(time.FixedZone("", off*60)).Format(layout)
	}
	rapid.Check(t, func(t *rapid.T) {
		at := time.Unix(rapid.Int64Range(-60e9, 250e9).Draw(t, "at"), rapid.Int64Range(0, 999999999).Draw(t, "ns")).UTC()
		other := at.Add(time.Duration(rapid.Int64Range(-2, 2).Draw(t, "step")) * time.Duration(rapid.SampledFrom([]int64{1, 1e6, 1e9}).Draw(t, "unit")))
		a, b := spell(t, at, "a"), spell(t, other, "b")
		ta, err1 := time.Parse(time.RFC3339Nano, a)
		tb, err2 := time.Parse(time.RFC3339Nano, b)
		if err1 != nil || err2 != nil {
			t.Skip("outside the years time.Parse reads")
		}
		if got := value.Equal(a, b, s); got != ta.Equal(tb) {
			t.Fatalf("%s and %s: equal %v, want %v", a, b, got, ta.Equal(tb))
		}
		c, err := value.Canonical(a, s)
		var cs string
		json.Unmarshal(c, &cs)
		if tc, perr := time.Parse(time.RFC3339Nano, cs); err != nil || perr != nil || !tc.Equal(ta) {
			t.Fatalf("%s written %s: %v, %v", a, c, err, perr)
		}
	})
}

// TestDefaultsAtDepth: once normalised, every object of a drawn value has
// each member its schema gives a default, at every depth.
func TestDefaultsAtDepth(t *testing.T) {
	nested, visits := schema(t, "Nested"), schema(t, "Visits")
	rapid.Check(t, func(t *rapid.T) {
		g := schemagen.New(schematest.Rapid(t))
		v, _ := g.Value(nested)
		n, err := value.Normalize(v, nested)
		if err != nil {
			t.Fatal(err)
		}
		if care, ok := n.(map[string]any)["care"].(map[string]any); ok && care["level"] == nil {
			t.Fatalf("%v: care without its level", n)
		}
		w, _ := g.Value(visits)
		m, err := value.Normalize(w, visits)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range m.([]any) {
			if item.(map[string]any)["kind"] == nil {
				t.Fatalf("%v: a visit without its kind", m)
			}
		}
	})
}
