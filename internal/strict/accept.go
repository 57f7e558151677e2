package strict

import (
	"strings"
)

// AcceptsJSON reports whether the values of a request's Accept header admit
// application/json (RFC 9110 section 12.5.1): there are none, or the most
// specific media range that matches it (application/json with no parameter
// but a charset of utf-8, then application/*, then */*) has a weight above
// 0; of ranges equally specific, the highest weight counts. Empty list
// elements are skipped. A value that does not parse is refused.
func AcceptsJSON(values []string) (bool, error) {
	if len(values) == 0 || len(values) == 1 && (values[0] == "*/*" || values[0] == "application/json") {
		return true, nil
	}
	best, bestQ, seen := 0, 0, false
	for _, v := range values {
		for _, elem := range splitList(v) {
			if elem = strings.Trim(elem, " \t"); elem == "" {
				continue
			}
			seen = true
			spec, q, err := matchJSON(elem)
			if err != nil {
				return false, err
			}
			switch {
			case spec > best:
				best, bestQ = spec, q
			case spec == best && spec > 0:
				bestQ = max(bestQ, q)
			}
		}
	}
	if !seen { // only empty elements: no preference, as with no header
		return true, nil
	}
	return best > 0 && bestQ > 0, nil
}

// splitList splits a header value at the commas outside quoted strings.
func splitList(v string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case c == ',' && !quoted:
			out = append(out, v[start:i])
			start = i + 1
		}
	}
	return append(out, v[start:])
}

// matchJSON parses one media range with its parameters and weight, and
// returns how specifically it matches application/json (3 exactly, 2 for
// application/*, 1 for */*, 0 not at all) and its weight in thousandths.
func matchJSON(elem string) (spec, q int, err error) {
	rng, params, hasParams := strings.Cut(elem, ";")
	typ, sub, ok := strings.Cut(strings.TrimRight(rng, " \t"), "/")
	if !ok || !isToken(typ) || !isToken(sub) || typ == "*" && sub != "*" {
		return 0, 0, refuse("Accept: %.64q is not a media range", elem)
	}
	switch {
	case typ == "*":
		spec = 1
	case strings.EqualFold(typ, "application") && sub == "*":
		spec = 2
	case strings.EqualFold(typ, "application") && strings.EqualFold(sub, "json"):
		spec = 3
	}
	if !hasParams {
		return spec, 1000, nil
	}
	q = 1000
	for p := range strings.SplitSeq(params, ";") {
		name, value, ok := strings.Cut(strings.Trim(p, " \t"), "=")
		if !ok || !isToken(name) || value == "" {
			return 0, 0, refuse("Accept: %.64q: a parameter is not name=value", elem)
		}
		switch {
		case strings.EqualFold(name, "q"):
			if q, ok = qvalue(value); !ok {
				return 0, 0, refuse("Accept: %.64q: q must be a number from 0 to 1, with at most three decimals", elem)
			}
			return spec, q, nil // what follows the weight is no media type parameter
		case spec == 3 && !(strings.EqualFold(name, "charset") && strings.EqualFold(strings.Trim(value, `"`), "utf-8")):
			spec = 0 // application/json with a parameter it does not have
		}
	}
	return spec, q, nil
}

// qvalue reads a weight, in thousandths: "0" or "1", then optionally "."
// and up to three digits, all zeros after a 1 (RFC 9110's qvalue).
func qvalue(s string) (int, bool) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole != "0" && whole != "1" || len(frac) > 3 {
		return 0, false
	}
	q := 0
	for i := range 3 {
		q *= 10
		if i < len(frac) {
			if frac[i] < '0' || frac[i] > '9' {
				return 0, false
			}
			q += int(frac[i] - '0')
		}
	}
	if whole == "1" {
		return 1000, q == 0
	}
	return q, true
}

// isToken reports whether s is an RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// IdentityEncoding holds a request body's Content-Encoding, the values of
// its header, to none but identity: the server decodes no content coding,
// so a body sent gzip-compressed would otherwise be read as if plain.
func IdentityEncoding(values []string) error {
	for _, v := range values {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.Trim(c, " \t"); c != "" && !strings.EqualFold(c, "identity") {
				return refuse("Content-Encoding: %.32q is not supported: send the body without a content coding", c)
			}
		}
	}
	return nil
}
