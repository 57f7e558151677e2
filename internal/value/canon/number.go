package canon

import (
	"errors"
	"strconv"
	"strings"
)

// A Decimal is a number's exact value: Neg, and the value 0.Digits × 10^Point,
// its digits without leading or trailing zeros ("" for zero, which is never
// Neg). Every spelling of one value (1, 1.0, 1e0, 10e-1) is one Decimal.
type Decimal struct {
	Neg    bool
	Digits string
	Point  int64
}

// maxExponent bounds the exponent of a number's text: one beyond it is no
// number a program could hold, and refusing it keeps the arithmetic on
// int64 exact.
const maxExponent = 1e15

// ParseDecimal reads s, a number in JSON's syntax, exactly: no rounding,
// and no expansion of its exponent (1e1000000 stays three digits).
func ParseDecimal(s string) (Decimal, error) {
	var d Decimal
	rest, ok := strings.CutPrefix(s, "-")
	d.Neg = ok
	mant, exp, hasExp := strings.Cut(strings.ReplaceAll(rest, "E", "e"), "e")
	whole, frac, hasFrac := strings.Cut(mant, ".")
	if !digits(whole) || whole != "0" && whole[0] == '0' || hasFrac && !digits(frac) {
		return Decimal{}, errors.New("canon: not a JSON number: " + cut(s))
	}
	var e int64
	if hasExp {
		sign := int64(1)
		if len(exp) > 0 && (exp[0] == '+' || exp[0] == '-') {
			if exp[0] == '-' {
				sign = -1
			}
			exp = exp[1:]
		}
		if !digits(exp) {
			return Decimal{}, errors.New("canon: not a JSON number: " + cut(s))
		}
		exp = strings.TrimLeft(exp, "0")
		if len(exp) > 15 {
			return Decimal{}, errors.New("canon: the exponent of " + cut(s) + " is out of range")
		}
		e, _ = strconv.ParseInt("0"+exp, 10, 64)
		e *= sign
	}
	all := whole + frac
	lead := len(all) - len(strings.TrimLeft(all, "0"))
	all = strings.TrimRight(all[lead:], "0")
	if all == "" {
		return Decimal{}, nil
	}
	d.Digits = all
	d.Point = int64(len(whole)-lead) + e
	if d.Point > maxExponent || d.Point < -maxExponent {
		return Decimal{}, errors.New("canon: the exponent of " + cut(s) + " is out of range")
	}
	return d, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func cut(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}

// IsInteger reports whether d has no fraction.
func (d Decimal) IsInteger() bool { return d.Point >= int64(len(d.Digits)) }

// Append appends d in the canonical layout, ECMAScript's
// Number.prototype.toString applied to d's exact digits (RFC 8785's form of
// a double, whose shortest digits those are): plain digits when 1e-7 < |d| <
// 1e21, else one digit, the rest after a point, and the exponent
// (1.5e+21, 1e-7).
func (d Decimal) Append(b []byte) []byte {
	if d.Digits == "" {
		return append(b, '0')
	}
	if d.Neg {
		b = append(b, '-')
	}
	k, n := int64(len(d.Digits)), d.Point
	switch {
	case k <= n && n <= 21:
		b = append(b, d.Digits...)
		return append(b, strings.Repeat("0", int(n-k))...)
	case 0 < n && n <= 21:
		b = append(b, d.Digits[:int(n)]...)
		b = append(b, '.')
		return append(b, d.Digits[int(n):]...)
	case -6 < n && n <= 0:
		b = append(b, "0."...)
		b = append(b, strings.Repeat("0", int(-n))...)
		return append(b, d.Digits...)
	}
	b = append(b, d.Digits[0])
	if k > 1 {
		b = append(b, '.')
		b = append(b, d.Digits[1:]...)
	}
	b = append(b, 'e')
	if n-1 >= 0 {
		b = append(b, '+')
	}
	return strconv.AppendInt(b, n-1, 10)
}

// MaxIntegerDigits is the most digits AppendInteger writes an integer in.
const MaxIntegerDigits = 100

// AppendInteger appends d, an integer, in plain digits, the one way the
// contract writes an integer, when it has at most MaxIntegerDigits digits;
// a longer one (which only a schema without a format allows) in the
// canonical layout (Append), so that an exponent is never expanded past a
// bound.
func (d Decimal) AppendInteger(b []byte) []byte {
	if d.Digits == "" || !d.IsInteger() || d.Point > MaxIntegerDigits {
		return d.Append(b)
	}
	if d.Neg {
		b = append(b, '-')
	}
	b = append(b, d.Digits...)
	return append(b, strings.Repeat("0", int(d.Point)-len(d.Digits))...)
}

// Number is the JSON number s in the canonical layout (Decimal.Append).
func Number(s string) (string, error) {
	d, err := ParseDecimal(s)
	if err != nil {
		return "", err
	}
	return string(d.Append(nil)), nil
}

// FloatDecimal is the exact value of the shortest digits that read back as
// f, a float of bits 32 or 64 (strconv's shortest form): the canonical
// form of a float32 or a float64 value.
func FloatDecimal(f float64, bits int) Decimal {
	d, _ := ParseDecimal(strconv.FormatFloat(f, 'e', -1, bits))
	return d
}

// canonicalNumber reports whether s is a number in a canonical form: the
// layout of its value, or plain digits of an integer (AppendInteger).
func canonicalNumber(s string) bool {
	d, err := ParseDecimal(s)
	if err != nil {
		return false
	}
	return s == string(d.Append(nil)) || s == string(d.AppendInteger(nil))
}
