package judge

import (
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// Relations between the values of one answer: each value may keep its
// schema and still contradict another. The rules here hold on every
// answer that carries the values, whichever case drew it (rules.go).

// rateLimitValues are an answer's RateLimit-Limit, -Remaining and -Reset,
// each one integer; ok is false when any is absent, repeated or not one
// (the schema's check speaks for those).
func rateLimitValues(h http.Header) (limit, remaining, reset int, ok bool) {
	var n [3]int
	for i, name := range rateLimitFields {
		vs := h.Values(name)
		if len(vs) != 1 {
			return 0, 0, 0, false
		}
		v, err := strconv.Atoi(strings.TrimSpace(vs[0]))
		if err != nil {
			return 0, 0, 0, false
		}
		n[i] = v
	}
	return n[0], n[1], n[2], true
}

// judgeRemaining: RateLimit-Remaining is never more than RateLimit-Limit.
func judgeRemaining(_ Facts, x *Exchange) (bool, string) {
	limit, remaining, _, ok := rateLimitValues(x.Header)
	if !ok {
		return false, ""
	}
	if remaining > limit {
		return true, fmt.Sprintf("RateLimit-Remaining at most RateLimit-Limit (%d), not %d", limit, remaining)
	}
	return true, ""
}

// judgeReset: RateLimit-Reset is 0 exactly when the quota is full, that is
// when RateLimit-Remaining equals RateLimit-Limit.
func judgeReset(_ Facts, x *Exchange) (bool, string) {
	limit, remaining, reset, ok := rateLimitValues(x.Header)
	if !ok {
		return false, ""
	}
	if full := remaining == limit; full != (reset == 0) {
		return true, fmt.Sprintf("RateLimit-Reset 0 exactly when RateLimit-Remaining equals RateLimit-Limit: %d of %d left, yet Reset %d", remaining, limit, reset)
	}
	return true, ""
}

// judgeCharset: an answer's Content-Type names no charset but utf-8.
func judgeCharset(f Facts, x *Exchange) (bool, string) {
	ct := x.Header.Get("Content-Type")
	if ct == "" || len(x.Body) == 0 {
		return false, ""
	}
	_, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return false, "" // content_type_conformance speaks for it
	}
	cs, ok := params["charset"]
	if !ok {
		return true, ""
	}
	for _, allowed := range f.RuleStrings("answer-charset", "charsets") {
		if strings.EqualFold(cs, allowed) {
			return true, ""
		}
	}
	return true, fmt.Sprintf("a Content-Type with no charset but %s, not %q", strings.Join(f.RuleStrings("answer-charset", "charsets"), " or "), cs)
}
