package schemagen

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode/utf8"
)

// A pattern is read as kin-openapi reads it: ECMAScript's \uXXXX escapes
// spelt as Go's \x{XXXX}, then Go's regexp syntax. The generator walks the
// parsed expression and builds a string of about the length it wants: a
// literal as written, a character of each class (from the alphabet drawn
// when the class holds some of it), as many repetitions as the length
// needs, one branch of each alternation. The result is checked against the
// schema like every value.

var ecmaCodepoint = regexp.MustCompile(`\\u([0-9A-F]{4})`)

// GoPattern spells an OpenAPI (ECMAScript) pattern for Go's regexp: its
// \uXXXX escapes, which the contract writes upper-case as kin-openapi reads
// them, become \x{XXXX}.
func GoPattern(p string) string { return ecmaCodepoint.ReplaceAllString(p, `\x{$1}`) }

// parsed holds each pattern parsed once.
var parsed sync.Map // pattern → parsedPattern

type parsedPattern struct {
	re  *syntax.Regexp
	err error
}

func parsePattern(p string) (*syntax.Regexp, error) {
	if v, ok := parsed.Load(p); ok {
		pp := v.(parsedPattern)
		return pp.re, pp.err
	}
	re, err := syntax.Parse(GoPattern(p), syntax.Perl)
	parsed.Store(p, parsedPattern{re, err})
	return re, err
}

// patterned draws a string that matches pattern, of about want characters,
// its characters from alpha where the pattern lets them be.
func (g *Generator) patterned(pattern string, want, alpha int) (string, error) {
	re, err := parsePattern(pattern)
	if err != nil {
		return "", fmt.Errorf("schemagen: pattern %q: %w", pattern, err)
	}
	var b strings.Builder
	if err := g.walk(&b, re, want, alpha); err != nil {
		return "", fmt.Errorf("schemagen: pattern %q: %w", pattern, err)
	}
	return b.String(), nil
}

// inf stands for no upper bound on a length.
const inf = 1 << 30

// span is the shortest and longest length of the strings re matches.
func span(re *syntax.Regexp) (lo, hi int) {
	switch re.Op {
	case syntax.OpNoMatch:
		return inf, 0
	case syntax.OpLiteral:
		return len(re.Rune), len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1, 1
	case syntax.OpCapture:
		return span(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		sl, sh := span(re.Sub[0])
		rl, rh := repeats(re)
		return min(sl*rl, inf), mulInf(sh, rh)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			sl, sh := span(sub)
			lo, hi = min(lo+sl, inf), min(hi+sh, inf)
		}
		return lo, hi
	case syntax.OpAlternate:
		lo = inf
		for _, sub := range re.Sub {
			sl, sh := span(sub)
			lo, hi = min(lo, sl), max(hi, sh)
		}
		return lo, hi
	}
	return 0, 0 // empty-width assertions, the empty string
}

func mulInf(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a >= inf || b >= inf || a > inf/b {
		return inf
	}
	return a * b
}

// repeats is the range of repetitions of a repetition operator.
func repeats(re *syntax.Regexp) (lo, hi int) {
	switch re.Op {
	case syntax.OpStar:
		return 0, inf
	case syntax.OpPlus:
		return 1, inf
	case syntax.OpQuest:
		return 0, 1
	}
	if re.Max < 0 {
		return re.Min, inf
	}
	return re.Min, re.Max
}

// walk writes a string re matches, of about want characters.
func (g *Generator) walk(b *strings.Builder, re *syntax.Regexp, want, alpha int) error {
	switch re.Op {
	case syntax.OpNoMatch:
		return fmt.Errorf("matches nothing")
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		b.WriteRune(g.classChar(re.Rune, alpha))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		c := g.char(alpha)
		if c == '\n' && re.Op == syntax.OpAnyCharNotNL {
			c = 'a'
		}
		b.WriteRune(c)
	case syntax.OpCapture:
		return g.walk(b, re.Sub[0], want, alpha)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		return g.repeat(b, re, want, alpha)
	case syntax.OpConcat:
		return g.concat(b, re.Sub, want, alpha)
	case syntax.OpAlternate:
		var fit []*syntax.Regexp
		for _, sub := range re.Sub {
			if lo, hi := span(sub); lo <= want && want <= hi {
				fit = append(fit, sub)
			}
		}
		if len(fit) == 0 {
			fit = re.Sub
		}
		return g.walk(b, fit[g.pick(len(fit))], want, alpha)
	}
	return nil // empty-width assertions: the walk keeps to them by construction
}

// repeat writes as many repetitions of re's operand as want needs, within
// the operator's range, each of about an equal share of want.
func (g *Generator) repeat(b *strings.Builder, re *syntax.Regexp, want, alpha int) error {
	sub := re.Sub[0]
	lo, hi := repeats(re)
	sl, sh := span(sub)
	n := min(max(want/max(sl, 1), lo), hi)
	if sh == 0 {
		n = lo
	}
	for i := range n {
		share := want / max(n, 1)
		if i < want%max(n, 1) {
			share++
		}
		if err := g.walk(b, sub, min(max(share, sl), sh), alpha); err != nil {
			return err
		}
	}
	return nil
}

// concat writes each part of a concatenation, sharing out the characters
// want has beyond the parts' shortest: by the source's choice first, then
// what is left to any part with room.
func (g *Generator) concat(b *strings.Builder, subs []*syntax.Regexp, want, alpha int) error {
	give := make([]int, len(subs))
	room := make([]int, len(subs))
	extra := want
	for i, sub := range subs {
		lo, hi := span(sub)
		give[i], room[i] = lo, hi-lo
		extra -= lo
	}
	for i := range subs {
		if extra <= 0 {
			break
		}
		take := min(extra, room[i])
		switch g.pick(3) {
		case 1:
			take = 0
		case 2:
			take = g.pick(take + 1)
		}
		give[i] += take
		room[i] -= take
		extra -= take
	}
	for i := range subs {
		take := min(max(extra, 0), room[i])
		give[i] += take
		extra -= take
	}
	for i, sub := range subs {
		if err := g.walk(b, sub, give[i], alpha); err != nil {
			return err
		}
	}
	return nil
}

// classChar draws a character of a class (pairs of inclusive ranges): one
// of alpha's, when the class holds any; else one of its ranges, then one
// character of it, surrogates aside.
func (g *Generator) classChar(ranges []rune, alpha int) rune {
	set := alphabets[alphaLower]
	switch {
	case alpha >= 0 && alpha < len(alphabets):
		set = alphabets[alpha]
	case alpha == alphaMixed:
		set = alphabets[g.pick(len(alphabets))]
	}
	n := 0
	for _, c := range set {
		if inClass(ranges, c) {
			n++
		}
	}
	if n > 0 {
		k := g.pick(n)
		for _, c := range set {
			if inClass(ranges, c) {
				if k == 0 {
					return c
				}
				k--
			}
		}
	}
	var usable [][2]rune
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		for _, part := range [][2]rune{{lo, min(hi, 0xD7FF)}, {max(lo, 0xE000), min(hi, utf8.MaxRune)}} {
			if part[0] <= part[1] {
				usable = append(usable, part)
			}
		}
	}
	if len(usable) == 0 {
		return utf8.RuneError
	}
	r := usable[g.pick(len(usable))]
	return r[0] + rune(g.pick(int(r[1]-r[0])+1))
}

func inClass(ranges []rune, c rune) bool {
	for i := 0; i+1 < len(ranges); i += 2 {
		if ranges[i] <= c && c <= ranges[i+1] {
			return true
		}
	}
	return false
}
