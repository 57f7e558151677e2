package conform

import (
	"encoding/json"
	"maps"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

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

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

// validRequest is a request op accepts: path parameters from id (a pet
// that exists where one does), a body with every required member.
func (r *run) validRequest(op *operation, id string) request {
	req := request{Method: op.Method, Target: op.Target(r.pathValues(op, id), "")}
	if op.Body != nil {
		req.Header = jsonHeader.Clone()
		req.Body = mustJSON(r.baseBody(op.Body))
	}
	return req
}

func (r *run) pathValues(op *operation, id string) map[string]string {
	if spare := r.spareFor(op); spare != "" {
		id = spare // never a fixed id to an operation the kit has no model for
	}
	values := map[string]string{}
	for _, p := range op.InPath {
		values[p.Name] = id
	}
	return values
}

// baseBody is a valid body of schema s with its required members only; a
// string member without an enum takes a name unique to this run.
func (r *run) baseBody(s *openapi3.Schema) map[string]any {
	return r.baseBodyNamed(s, "")
}

// baseBodyNamed is baseBody with name, when not empty, for its string
// members, and the first valid value for the others: the same body for the
// same name.
func (r *run) baseBodyNamed(s *openapi3.Schema, name string) map[string]any {
	body := map[string]any{}
	for _, member := range s.Required {
		ref := s.Properties[member]
		if ref == nil || ref.Value == nil {
			continue
		}
		ps := cases.Flat(ref.Value)
		if cases.IsType(ps, "string") && len(ps.Enum) == 0 && cases.StringOK(ps, "conform") {
			if name != "" && cases.StringOK(ps, name) {
				body[member] = name
			} else {
				body[member] = r.name("conform")
			}
			continue
		}
		if vs := r.valid(ps); len(vs) > 0 {
			if name != "" {
				body[member] = vs[0].JSON // the same body for the same name
			} else {
				body[member] = vs[len(vs)-1].JSON
			}
		}
	}
	return body
}

// newPet is a valid create body named prefix-…, unique to this run, with
// the members of extra on top.
func (r *run) newPet(prefix string, extra map[string]any) map[string]any {
	body := r.baseBodyNamed(r.roles.Create.Body, r.name(prefix))
	maps.Copy(body, extra)
	return body
}

// createReq is a create of body, as JSON, with header's fields on top of
// a JSON Content-Type.
func (r *run) createReq(body []byte, header http.Header) request {
	h := jsonHeader.Clone()
	for k, v := range header {
		h[k] = v
	}
	return request{Method: r.roles.Create.Method, Target: r.roles.Create.Path, Header: h, Body: body}
}

// listTarget is the listing with query.
func (r *run) listTarget(query string) string { return r.roles.List.Target(nil, query) }

// getTarget is the get of the pet id.
func (r *run) getTarget(id int64) string {
	return r.roles.Get.Target(r.pathValues(r.roles.Get, strconv.FormatInt(id, 10)), "")
}

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
	c := h.Clone()
	if c == nil {
		c = http.Header{}
	}
	c[http.CanonicalHeaderKey(name)] = values
	return c
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
