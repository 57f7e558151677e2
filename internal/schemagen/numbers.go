package schemagen

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
)

// The int64 range. kin-openapi holds minimum and maximum as float64, so a
// bound of 9223372036854775807 arrives as 2^63, one past the largest int64:
// a bound at or past ±2^63 is the end of the int64 range.
var (
	maxInt64 = big.NewInt(math.MaxInt64)
	minInt64 = big.NewInt(math.MinInt64)
)

// IntBounds returns the inclusive range of an integer schema: its minimum
// and maximum (exclusive ones made inclusive), within its format's range
// (int32, else int64).
func IntBounds(s *openapi3.Schema) (lo, hi *big.Int) {
	lo, hi = new(big.Int).Set(minInt64), new(big.Int).Set(maxInt64)
	if s.Format == "int32" {
		lo, hi = big.NewInt(math.MinInt32), big.NewInt(math.MaxInt32)
	}
	if s.Min != nil {
		if m := bigOf(math.Ceil(*s.Min)); m.Cmp(lo) > 0 {
			lo = m
			if s.ExclusiveMin.IsTrue() && float64(*s.Min) == math.Ceil(*s.Min) {
				lo.Add(lo, big.NewInt(1))
			}
		}
	}
	if s.Max != nil {
		if m := bigOf(math.Floor(*s.Max)); m.Cmp(hi) < 0 {
			hi = m
			if s.ExclusiveMax.IsTrue() && float64(*s.Max) == math.Floor(*s.Max) {
				hi.Sub(hi, big.NewInt(1))
			}
		}
	}
	return lo, hi
}

func bigOf(f float64) *big.Int {
	b, _ := new(big.Float).SetFloat64(f).Int(nil)
	return b
}

// wide are integers a narrower type than int64 loses: past int16, int32
// and uint32, past 2^53 (a JavaScript number).
var wide = []int64{32768, math.MaxInt32, math.MaxInt32 + 1, math.MaxUint32 + 1, 1<<53 + 1}

// integer draws an integer of s: the one nearest zero, a bound, one near a
// bound, one a narrower type loses, or any in the range.
func (g *Generator) integer(s *openapi3.Schema) json.Number {
	lo, hi := IntBounds(s)
	if lo.Cmp(hi) > 0 {
		return intNumber(lo) // no value: VisitJSON says so
	}
	var n *big.Int
	switch g.pick(7) {
	case 0:
		n = clamp(big.NewInt(0), lo, hi)
	case 1:
		n = lo
	case 2:
		n = hi
	case 3:
		n = clamp(new(big.Int).Add(lo, big.NewInt(int64(g.pick(100)))), lo, hi)
	case 4:
		n = clamp(new(big.Int).Sub(hi, big.NewInt(int64(g.pick(100)))), lo, hi)
	case 5:
		n = clamp(big.NewInt(wide[g.pick(len(wide))]), lo, hi)
	default:
		n = g.between(lo, hi)
	}
	return intNumber(g.multiple(s, n, lo, hi))
}

// between draws an integer in [lo, hi].
func (g *Generator) between(lo, hi *big.Int) *big.Int {
	span := new(big.Int).Sub(hi, lo)
	span.Add(span, big.NewInt(1))
	r := new(big.Int)
	for range 3 { // 96 bits: enough for any int64 range
		r.Lsh(r, 32)
		r.Or(r, big.NewInt(int64(g.pick(1<<32))))
	}
	return r.Mod(r, span).Add(r, lo)
}

// multiple moves n to a multiple of s's multipleOf within [lo, hi], when it
// has an integer one.
func (g *Generator) multiple(s *openapi3.Schema, n, lo, hi *big.Int) *big.Int {
	if s.MultipleOf == nil || *s.MultipleOf < 1 || *s.MultipleOf != math.Trunc(*s.MultipleOf) {
		return n
	}
	m := bigOf(*s.MultipleOf)
	q := new(big.Int).Quo(n, m)
	for _, c := range []*big.Int{new(big.Int).Mul(q, m), new(big.Int).Mul(q.Add(q, big.NewInt(1)), m), new(big.Int).Mul(q.Sub(q, big.NewInt(2)), m)} {
		if c.Cmp(lo) >= 0 && c.Cmp(hi) <= 0 {
			return c
		}
	}
	return n
}

func clamp(n, lo, hi *big.Int) *big.Int {
	switch {
	case n.Cmp(lo) < 0:
		return lo
	case n.Cmp(hi) > 0:
		return hi
	}
	return n
}

func intNumber(n *big.Int) json.Number { return json.Number(n.String()) }

// floatBounds returns the range of a number schema, exclusive bounds moved
// in by the smallest step; a float schema's range is float32's.
func floatBounds(s *openapi3.Schema) (lo, hi float64) {
	lo, hi = -math.MaxFloat64, math.MaxFloat64
	if s.Format == "float" {
		lo, hi = -math.MaxFloat32, math.MaxFloat32
	}
	if s.Min != nil && *s.Min > lo {
		lo = *s.Min
		if s.ExclusiveMin.IsTrue() {
			lo = math.Nextafter(lo, math.Inf(1))
		}
	}
	if s.Max != nil && *s.Max < hi {
		hi = *s.Max
		if s.ExclusiveMax.IsTrue() {
			hi = math.Nextafter(hi, math.Inf(-1))
		}
	}
	return lo, hi
}

// plainNumbers are numbers an unbounded number schema may get: a fraction,
// a negative one, very large and very small magnitudes.
var plainNumbers = []float64{1.5, -2.25, 0.1, 1e300, -1e-300, 123456.789}

// number draws a number of s: zero (or the bound nearest it), a bound, a
// fraction, or any in the range.
func (g *Generator) number(s *openapi3.Schema) json.Number {
	lo, hi := floatBounds(s)
	var f float64
	switch g.pick(5) {
	case 0:
		f = 0
	case 1:
		f = lo
	case 2:
		f = hi
	case 3:
		f = plainNumbers[g.pick(len(plainNumbers))]
	default:
		frac := float64(g.pick(1<<30)) / (1 << 30)
		f = lo + frac*(hi-lo)
		if math.IsInf(f, 0) || math.IsNaN(f) { // the whole float64 range
			f = lo/2 + frac*(hi/2-lo/2)
		}
	}
	f = math.Max(lo, math.Min(hi, f))
	if s.MultipleOf != nil && *s.MultipleOf > 0 {
		if m := math.Round(f / *s.MultipleOf) * *s.MultipleOf; m >= lo && m <= hi {
			f = m
		} else if m := math.Ceil(lo / *s.MultipleOf) * *s.MultipleOf; m <= hi {
			f = m
		}
	}
	if s.Format == "float" {
		f = float32Within(f, lo, hi)
	}
	return floatNumber(f)
}

// floatNumber is f as a JSON number, in its shortest form.
func floatNumber(f float64) json.Number {
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

// float32Within is f rounded to a float32, moved by one step of float32
// when rounding took it past lo or hi: the value a float member is stored
// as (package value) keeps the schema's bounds too.
func float32Within(f, lo, hi float64) float64 {
	r := float32(f)
	switch {
	case float64(r) > hi:
		r = math.Nextafter32(r, float32(math.Inf(-1)))
	case float64(r) < lo:
		r = math.Nextafter32(r, float32(math.Inf(1)))
	}
	return float64(r)
}
