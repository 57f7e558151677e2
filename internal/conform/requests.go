package conform

import (
	"encoding/json"
	"maps"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/conform/judge"
)

// bounds are the limits the spec being checked sets, read from it, never
// assumed: a new major may lower them.
type bounds struct {
	limitMax     int           // the listing's limit maximum
	limitDefault int           // and its default (the maximum without one)
	bodyMax      int64         // the largest body the spec allows (x-rules body-size); 0 unstated
	headMax      int           // the largest request line and headers it allows (head-size); 0 unstated
	headTimeout  time.Duration // the time a request head may take to arrive (head-timeout); 0 unstated
	retention    time.Duration // how long a create's outcome is kept for its Idempotency-Key (retention); 0 unstated
}

func (r *run) findBounds() bounds {
	b := bounds{limitMax: 100, limitDefault: 100}
	if r.roles.List != nil {
		for _, p := range r.roles.List.Query {
			if p.Name != "limit" || p.Schema == nil || p.Schema.Value == nil {
				continue
			}
			s := cases.Flat(p.Schema.Value)
			_, hi := cases.IntBounds(s)
			if hi.IsInt64() && hi.Int64() < 1<<20 {
				b.limitMax = int(hi.Int64())
			}
			b.limitDefault = b.limitMax
			if d, ok := s.Default.(float64); ok && d >= 1 && d <= float64(b.limitMax) {
				b.limitDefault = int(d)
			}
		}
	}
	if n := r.ruleNumber("body-size", "maxBytes"); n >= 1 && n <= 1<<30 {
		b.bodyMax = int64(n)
	}
	if n := r.ruleNumber("head-size", "maxBytes"); n >= 1 && n <= 1<<20 { // the kit sends that many bytes
		b.headMax = int(n)
	}
	if n := r.ruleNumber("head-timeout", "seconds"); n > 0 {
		b.headTimeout = time.Duration(n * float64(time.Second))
	}
	if n := r.ruleNumber("retention", "hours"); n > 0 {
		b.retention = time.Duration(n * float64(time.Hour))
	}
	return b
}

// defaults are the defaults of the created resource's members, as canonical
// JSON.
func (r *run) defaults() map[string]string {
	d := map[string]string{}
	if r.roles.Create == nil {
		return d
	}
	for name, ref := range r.roles.Create.Body.Properties {
		if s := cases.Flat(ref.Value); s != nil && s.Default != nil {
			d[name] = canonical(s.Default)
		}
	}
	return d
}

// jsonHeader is a JSON Content-Type (cases.JSONHeader).
var jsonHeader = cases.JSONHeader

// mustJSON is v as JSON (cases.MustJSON).
func mustJSON(v any) []byte { return cases.MustJSON(v) }

// with returns a copy of body with member name set to v (absent when v is
// the absent marker).
func with(body map[string]any, name string, v any) map[string]any {
	c := maps.Clone(body)
	if v == absent {
		delete(c, name)
	} else {
		c[name] = v
	}
	return c
}

// absent is the marker of a member left out (cases.Absent).
var absent = cases.Absent

// cloneWith is a copy of h with header name given values, and no others.
func cloneWith(h http.Header, name string, values ...string) http.Header {
	return cases.CloneWith(h, name, values...)
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// intNumber is n as a JSON number.
func intNumber(n *big.Int) json.Number { return json.Number(n.String()) }

// nextLink returns the target of a Link rel="next", or "" (judge.NextLink).
func nextLink(h http.Header) string { return judge.NextLink(h) }

func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, m := range strings.Split(v, ",") {
			out = append(out, strings.TrimSpace(m))
		}
	}
	return out
}
