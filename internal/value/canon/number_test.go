package canon

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// spelling draws a JSON spelling of the decimal sign·digits·10^exp: the
// digits with zeros before and after, the point moved, an exponent in
// either case with or without its sign.
func spelling(t *rapid.T, neg bool, digits string, exp int) string {
	lead := strings.Repeat("0", rapid.IntRange(0, 3).Draw(t, "lead"))
	trail := strings.Repeat("0", rapid.IntRange(0, 3).Draw(t, "trail"))
	all := lead + digits + trail // value: all · 10^(exp - len(trail))
	exp -= len(trail)
	point := rapid.IntRange(0, len(all)).Draw(t, "point") // digits before the point
	exp += len(all) - point
	whole, frac := strings.TrimLeft(all[:point], "0"), all[point:]
	if whole == "" {
		whole = "0"
	}
	s := whole
	if frac != "" {
		s += "." + frac
	}
	if exp != 0 || rapid.Bool().Draw(t, "e0") {
		e := rapid.SampledFrom([]string{"e", "E"}).Draw(t, "e")
		switch {
		case exp < 0:
			e += "-"
		case rapid.Bool().Draw(t, "plus"):
			e += "+"
		}
		s += e + strconv.Itoa(abs(exp))
	}
	if neg {
		s = "-" + s
	}
	return s
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// rat is the exact value of the JSON number s.
func rat(t *rapid.T, s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("%s: not a number big.Rat reads", s)
	}
	return r
}

// TestNumberOneForm: every spelling of a value has the same canonical
// form, which is its own canonical form and reads back as the value; two
// values have the same form only when they are equal.
func TestNumberOneForm(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		draw := func(name string) (bool, string, int) {
			neg := rapid.Bool().Draw(t, name+" neg")
			digits := rapid.StringMatching(`[1-9]([0-9]{0,25}[1-9])?`).Draw(t, name+" digits")
			return neg, digits, rapid.IntRange(-40, 40).Draw(t, name+" exp")
		}
		neg, digits, exp := draw("a")
		a1, a2 := spelling(t, neg, digits, exp), spelling(t, neg, digits, exp)
		c1, err1 := Number(a1)
		c2, err2 := Number(a2)
		if err1 != nil || err2 != nil || c1 != c2 {
			t.Fatalf("%s → %s, %v; %s → %s, %v: want one form", a1, c1, err1, a2, c2, err2)
		}
		if again, err := Number(c1); err != nil || again != c1 {
			t.Fatalf("%s: canonical %s, again %s, %v", a1, c1, again, err)
		}
		if rat(t, c1).Cmp(rat(t, a1)) != 0 {
			t.Fatalf("%s: canonical %s is another value", a1, c1)
		}
		neg, digits, exp = draw("b")
		b := spelling(t, neg, digits, exp)
		cb, _ := Number(b)
		if (cb == c1) != (rat(t, b).Cmp(rat(t, a1)) == 0) {
			t.Fatalf("%s → %s and %s → %s: the same form iff the same value", a1, c1, b, cb)
		}
	})
}

// ecmaScript is RFC 8785's form of the double f: ECMAScript's
// Number.prototype.toString (the form canon wrote every number in before
// numbers were exact).
func ecmaScript(f float64) string {
	if f == 0 {
		return "0"
	}
	if a := math.Abs(f); a >= 1e21 || a < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		i := strings.IndexByte(s, 'e')
		return s[:i+2] + strings.TrimLeft(s[i+2:], "0")
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// TestNumberDoubles: a double's value, written in its shortest digits, is
// written as RFC 8785 writes the double.
func TestNumberDoubles(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := math.Float64frombits(rapid.Uint64().Draw(t, "bits"))
		if math.IsNaN(f) || math.IsInf(f, 0) {
			t.Skip("no JSON number")
		}
		got, err := Number(strconv.FormatFloat(f, 'g', -1, 64))
		if want := ecmaScript(f); err != nil || got != want {
			t.Fatalf("%v: got %s, %v; want %s", f, got, err, want)
		}
		if d := FloatDecimal(f, 64); string(d.Append(nil)) != got {
			t.Fatalf("%v: FloatDecimal %s, want %s", f, d.Append(nil), got)
		}
	})
}

func TestAppendInteger(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"0", "0"}, {"-0", "0"}, {"1e21", "1000000000000000000000"}, {"-12.5e1", "-125"},
		{"123456789012345678901234567890", "123456789012345678901234567890"},
		{"1e99", "1" + strings.Repeat("0", 99)}, {"1e100", "1e+100"}, {"1e1000000", "1e+1000000"}, {"1.5", "1.5"},
	} {
		d, err := ParseDecimal(tc.in)
		if got := string(d.AppendInteger(nil)); err != nil || got != tc.want {
			t.Errorf("%s: got %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}
