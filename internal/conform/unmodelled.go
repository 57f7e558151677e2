package conform

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/conform/wire"
	"github.com/petstore/petstore/internal/history"
)

// An operation the kit has no model for (neither the create, the listing
// nor the get of roles: one a new version of the spec adds, say DELETE
// /pets/{petId}) is judged on form: every answer against the spec (its
// status, headers and body, its error code, the rules of every answer), its
// cases from its parameters' schemas and the sentences, like any. Its
// meaning is method_semantics's to judge where a rule of it covers the
// operation (semantics.go); else the report names it under Incomplete,
// "meaning not modelled". Beyond those rules nothing it does may make the
// kit fail a conforming server:
//
//   - a valid request to it wants any answer the spec documents for it but
//     a refusal of the request's form or key (400, 401, 405, 406, 413, 415,
//     431) or a 5xx: a 204, a 404 for a pet that is gone, a 409 are its own
//     business;
//   - a request with a method that is not safe (RFC 9110: not GET, HEAD,
//     OPTIONS, TRACE) may change or remove the pets it names: it is sent the
//     id of a pet the kit made for it (the spare), never a fixed one that may
//     name another writer's pet, and every pet of the model whose id its path
//     names (every pet the model holds, when its path names no integer)
//     leaves the model as the request is sent: the kit judges it no more.

// modelled reports whether the model follows op.
func (r *run) modelled(op *cases.Operation) bool {
	return op == r.roles.Create || op == r.roles.List || op == r.roles.Get
}

// safeMethod reports whether RFC 9110 calls method safe: a request with it
// changes nothing.
func safeMethod(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// noteUnmodelled names, in the report, each operation whose meaning no
// rule judges, neither the model nor method_semantics (semantics.go): it is
// judged on form only, and the run is incomplete, never passed.
func (r *run) noteUnmodelled() {
	for _, op := range r.ops {
		if !r.modelled(op) && r.semanticRule(op) == "" {
			r.Incomplete("method_semantics", "operation "+op.ID, "meaning not modelled: judged on form only (its answers against the spec); "+op.Method+" "+op.Path+" is none of the create, listing and get the kit's model follows, and no rule of method_semantics covers it")
		}
	}
}

// formRefusals are the answers that refuse a request's form or key: a
// valid request is never given one.
var formRefusals = []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusMethodNotAllowed, http.StatusNotAcceptable,
	http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusRequestHeaderFieldsTooLarge}

// documented is what a valid request to op, an operation the kit has no
// model for, wants: a 2xx or 4xx the spec documents for op, but a refusal
// of its form or key.
func (r *run) documented(op *cases.Operation) judge.Outcome {
	var statuses []int
	add := func(lo, hi int) {
		for s := lo; s <= hi; s++ {
			if !slices.Contains(formRefusals, s) && !slices.Contains(statuses, s) {
				statuses = append(statuses, s)
			}
		}
	}
	for code := range op.Op.Responses.Map() {
		switch n, err := strconv.Atoi(code); {
		case err == nil && n >= 200 && n < 500:
			add(n, n)
		case code == "2XX":
			add(200, 299)
		case code == "4XX":
			add(400, 499)
		case code == "default":
			add(200, 499)
		}
	}
	if len(statuses) == 0 {
		return cases.Accepted()
	}
	slices.Sort(statuses)
	return judge.Outcome{Status: statuses}
}

// SpareFor is the id a request to op names where it names a pet: the
// spare, for an operation the kit has no model for ("" for another, or
// when the run has none).
func (r *run) SpareFor(op *cases.Operation) string {
	if r.modelled(op) {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.spare
}

// makeSpare creates the pet the requests to the operations the kit has no
// model for name, when one of them has path parameters; it leaves the model
// at once.
func (r *run) makeSpare(ctx context.Context) error {
	need := false
	for _, op := range r.ops {
		need = need || !r.modelled(op) && len(op.InPath) > 0
	}
	if !need || r.roles.Create == nil {
		return nil
	}
	x, id, ok, err := r.Post(ctx, cases.MustJSON(r.reqs.NewPet("conform-spare", nil)), nil, 1)
	if err != nil || !ok {
		if err == nil {
			r.Expect("positive_data_acceptance", x, false, "201 for a valid create")
		}
		return err
	}
	r.hist.Note(&history.Op{Kind: history.Other, Kit: history.Kit{Release: []int64{id}}})
	r.mu.Lock()
	r.spare = strconv.FormatInt(id, 10)
	r.mu.Unlock()
	return nil
}

// ReleaseFor takes out of the model, as x leaves, the pets a request that
// is not safe, to an operation the kit has no model for, may change.
func (r *run) ReleaseFor(x *judge.Exchange) (ids []int64, all bool) {
	op := r.operation(x.Op)
	if op == nil || r.modelled(op) || safeMethod(x.Req.Method) {
		return nil, false
	}
	_, params, err := r.contract.Route(x.Req)
	for _, p := range op.InPath {
		if id, err2 := strconv.ParseInt(params[p.Name], 10, 64); err == nil && err2 == nil {
			ids = append(ids, id)
		}
	}
	return ids, len(ids) == 0
}

// DeferUnsafe keeps back, for the end of the run, the cases whose request
// goes to an operation the kit has no model for with a method that is not
// safe: whatever they change or remove (the run's own first pet, named by
// a bound of an id), no later case relies on. It returns the others.
func (r *run) DeferUnsafe(ks []cases.Case) []cases.Case {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.deferDone {
		return ks
	}
	var now []cases.Case
	for _, k := range ks {
		if op := r.opOf(k.Req); op != nil && !r.modelled(op) && !safeMethod(op.Method) {
			r.deferred = append(r.deferred, k)
			continue
		}
		now = append(now, k)
	}
	return now
}

// sendDeferred sends the cases deferUnsafe kept back: the last phase.
func (r *run) sendDeferred(ctx context.Context) error {
	r.mu.Lock()
	r.deferDone = true
	ks := r.deferred
	r.deferred = nil
	r.mu.Unlock()
	return cases.Send(ctx, r, ks)
}

// opOf is the operation the contract routes req to, or nil.
func (r *run) opOf(req wire.Request) *cases.Operation {
	if req.Raw != nil || strings.HasPrefix(req.Target, "http://") || strings.HasPrefix(req.Target, "https://") {
		return nil
	}
	hr, err := http.NewRequest(req.Method, r.base.String()+req.Target, nil)
	if err != nil {
		return nil
	}
	route, _, err := r.contract.Route(hr)
	if err != nil {
		return nil
	}
	for _, op := range r.ops {
		if op.Op == route.Operation {
			return op
		}
	}
	return nil
}

// AcceptedBy is the outcome of a valid request to op (cases.T): a create
// 201, a get 200 or 404 (a valid id may name no pet), the listing any 2xx,
// an operation the kit has no model for what the spec documents.
func (r *run) AcceptedBy(op *cases.Operation) judge.Outcome {
	switch {
	case op == r.roles.Create:
		return cases.Created()
	case !r.modelled(op):
		return r.documented(op)
	case len(op.InPath) > 0:
		return cases.Found()
	}
	return cases.Accepted()
}
