package schemagen

import (
	"github.com/getkin/kin-openapi/openapi3"
)

// The lengths a string may be drawn at.
type length int

const (
	lengthAny      length = iota // any of the others, by the source's choice
	lengthShortest               // minLength
	lengthLongest                // maxLength
	lengthBetween                // between them
)

// alphabets are the characters plain strings are drawn from, simplest
// first: lower-case ASCII letters; printable ASCII (quotes, the backslash
// and the solidus among them); letters of other scripts in the Basic
// Multilingual Plane, a combining mark and the zero-width joiner;
// characters outside it (two UTF-16 units, four UTF-8 bytes each); white
// space other than the space; control characters, which a schema without a
// pattern allows.
var alphabets = [][]rune{
	[]rune("abcdefghijklmnopqrstuvwxyz"),
	[]rune(" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"),
	[]rune("éßøπждשع猫犬ĀŸ\u0301\u200d\u200f"),
	[]rune("🐈🐕👩🚀𝔸𠀀😀\U000E0001\U0010FFFD"),
	[]rune("\u00a0\u1680\u2003\u2028\u2029\u202f\u3000\ufeff"),
	[]rune("\x00\x01\t\n\r\x1f\x7f\u0085\u009f"),
}

// The alphabets by name, for the bounds.
const (
	alphaAny    = -1 // any, or a mix of them, by the source's choice
	alphaLower  = 0
	alphaBMP    = 2
	alphaAstral = 3
	alphaMixed  = 6 // each character from any alphabet (len(alphabets))
)

// lengths returns the range of lengths of a string schema, in characters;
// without a maxLength, 24 past its minLength.
func lengths(s *openapi3.Schema) (lo, hi int) {
	lo = int(min(s.MinLength, 1<<20))
	hi = lo + 24
	if s.MaxLength != nil {
		hi = int(min(*s.MaxLength, 1<<20))
	}
	return lo, hi
}

// wantLength is a length drawn for s, as mode asks.
func (g *Generator) wantLength(s *openapi3.Schema, mode length) int {
	lo, hi := lengths(s)
	if hi < lo {
		return lo
	}
	if mode == lengthAny {
		mode = length(1 + g.pick(3))
	}
	switch mode {
	case lengthShortest:
		return lo
	case lengthLongest:
		return hi
	}
	return lo + g.pick(hi-lo+1)
}

// str draws a string of s at a length and in an alphabet (alphaAny: drawn).
func (g *Generator) str(s *openapi3.Schema, mode length, alpha int) (string, error) {
	n := g.wantLength(s, mode)
	if alpha == alphaAny {
		alpha = g.pick(len(alphabets) + 1)
	}
	switch {
	case s.Pattern != "":
		return g.patterned(s.Pattern, n, alpha)
	case formats[s.Format] != nil:
		return formats[s.Format](g), nil
	}
	b := make([]rune, n)
	for i := range b {
		b[i] = g.char(alpha)
	}
	return string(b), nil
}

// char draws a character of an alphabet (alphaMixed: of any).
func (g *Generator) char(alpha int) rune {
	if alpha >= len(alphabets) || alpha < 0 {
		alpha = g.pick(len(alphabets))
	}
	set := alphabets[alpha]
	return set[g.pick(len(set))]
}
