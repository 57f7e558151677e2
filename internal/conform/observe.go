package conform

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/history"
)

// tenant tells which of the run's keys a request carries.
func (r *run) tenant(h http.Header) int {
	scheme, key, ok := strings.Cut(h.Get("Authorization"), " ")
	switch {
	case !ok || !strings.EqualFold(scheme, "Bearer"):
		return 0
	case key == r.cfg.Key:
		return 1
	case key == r.cfg.Key2 && key != "":
		return 2
	}
	return 0
}

// AnswerPet decodes a pet in an answer: its id and its other members that
// the contract's pet names, each in the form the model compares it in
// (AnswerMembers). The objects a server sends are open (a later minor
// version may add members, and a client must ignore those it does not
// know), so a member more is not judged: docs/conformance-kit.md.
func (r *run) AnswerPet(body []byte) (int64, map[string]string, bool) {
	m, ok := r.AnswerMembers(body)
	if !ok {
		return 0, nil, false
	}
	id, err := strconv.ParseInt(m["id"], 10, 64)
	if err != nil {
		return 0, nil, false
	}
	var named openapi3.Schemas
	if r.roles.Create != nil && r.roles.Create.Created != nil {
		named = r.roles.Create.Created.Properties
	}
	rest := make(map[string]string, len(m))
	for k, v := range m {
		if _, ok := named[k]; k == "id" || named != nil && !ok {
			continue // the id, or a member the contract's pet does not name
		}
		rest[k] = v
	}
	return id, rest, true
}

// ListQuery reads a listing's query as the model needs it: after, limit
// (its default when absent) and the filter; ok is false for a query the
// contract refuses.
func (r *run) ListQuery(raw string) (history.Op, bool) {
	var o history.Op
	q, err := url.ParseQuery(raw)
	if err != nil {
		return o, false
	}
	o.Limit = r.bounds.LimitDefault
	for name, vs := range q {
		if len(vs) != 1 {
			return o, false
		}
		v := vs[0]
		switch name {
		case "after":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 || strconv.FormatInt(n, 10) != v {
				return o, false
			}
			o.After = n
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > r.bounds.LimitMax || strconv.Itoa(n) != v {
				return o, false
			}
			o.Limit = n
		case r.roles.Filter:
			o.Filter = v
		default:
			return o, false
		}
	}
	return o, o.Limit > 0
}
