package strict

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Int is the range of an integer: its format's (Bits, 32 or 64), narrowed
// by its schema's bounds where they are tighter. Check and JSON refuse only
// what does not fit the format; Min and Max word the refusal, as the schema's
// bounds are the validator's to check.
type Int struct {
	Bits     int
	Min, Max int64
}

// Int32 and Int64 are the ranges of the two integer formats.
var (
	Int32 = Int{Bits: 32, Min: math.MinInt32, Max: math.MaxInt32}
	Int64 = Int{Bits: 64, Min: math.MinInt64, Max: math.MaxInt64}
)

// Check holds v, the value of the integer parameter name, to the letter:
// base-10 digits with a "-" on a negative number only, no "+", no leading
// zeros, no "-0" (one spelling per number, as in JSON), within the format's
// range.
func (r Int) Check(name, v string) error {
	if !canonicalInt(v) {
		return refuse(`%s: must be a base-10 integer, without "+", leading zeros or "-0"`, name)
	}
	if _, err := strconv.ParseInt(v, 10, r.Bits); err != nil {
		return r.OutOfRange(name, v[0] == '-')
	}
	return nil
}

// JSON returns the JSON number n, the value of the member name, when it is
// an integer written without fraction or exponent within the format's
// range. (A validator that holds numbers as float64 takes 1.0 for an
// integer, and 2^63 for one within int64.)
func (r Int) JSON(name string, n json.Number) (int64, error) {
	s := string(n)
	if s == "" || strings.ContainsAny(s, ".eE") {
		return 0, refuse("%.64s: must be an integer, without fraction or exponent", name)
	}
	i, err := strconv.ParseInt(s, 10, r.Bits)
	if err != nil {
		return 0, r.OutOfRange(name, s[0] == '-')
	}
	return i, nil
}

// OutOfRange is the refusal of a number of the integer name beyond r, below
// it when negative.
func (r Int) OutOfRange(name string, negative bool) *Error {
	if negative {
		return refuse("%.64s: number must be at least %d", name, r.Min)
	}
	return refuse("%.64s: number must be at most %d", name, r.Max)
}

// canonicalInt reports whether v is an integer in canonical decimal form:
// 0, or an optional "-" and digits not starting with 0.
func canonicalInt(v string) bool {
	digits := strings.TrimPrefix(v, "-")
	if digits == "" || digits[0] == '0' && (len(digits) > 1 || len(v) > 1) {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}
