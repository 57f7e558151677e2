package conform

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// scope is where the judgments of an exchange go: the run's report and
// model, or, for a sequence of -examples, the sequence's own model and
// failures, kept until the sequence is shrunk.
type scope struct {
	run   *run
	model *model
	quiet bool // count no case: a re-run of a sequence while it is shrunk
	own   bool // keep failures in fails instead of the report
	trace bool // keep the curl line of every request, in lines
	mu    sync.Mutex
	fails []Failure
	lines []string
}

// failures returns the failures kept so far.
func (s *scope) failures() []Failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Failure(nil), s.fails...)
}

type scopeKey struct{}

// blameKey names, in a request's context, the check a pet of its name fails
// when no acknowledged create accounts for it.
type blameKey struct{}

func scopeOf(ctx context.Context, r *run) *scope {
	if s, ok := ctx.Value(scopeKey{}).(*scope); ok {
		return s
	}
	return r.main
}

// record counts one case of check on op, and a failure when f is not nil.
func (s *scope) record(check, op string, f *Failure) {
	if !s.own {
		s.run.record(check, op, f)
		return
	}
	if !s.quiet {
		s.run.record(check, op, nil)
	}
	if f != nil && s.run.enabled[check] {
		s.mu.Lock()
		f.Check, f.Operation = check, op
		s.fails = append(s.fails, *f)
		s.mu.Unlock()
	}
}

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

// key is the key of a tenant.
func (r *run) key(tenant int) string {
	if tenant == 2 {
		return r.cfg.Key2
	}
	return r.cfg.Key
}

// idempotencyKey is the one Idempotency-Key of h, without the quotes of
// its structured-field form, or "".
func idempotencyKey(h http.Header) string {
	vs := h.Values("Idempotency-Key")
	if len(vs) != 1 {
		return ""
	}
	k := vs[0]
	if len(k) >= 2 && k[0] == '"' && k[len(k)-1] == '"' {
		k = k[1 : len(k)-1]
	}
	return k
}

// sending notes a request as it leaves: its time, and for a create, the
// members it sends.
func (r *run) sending(x *exchange) {
	r.releaseFor(x)
	x.sentAt = r.clock.Add(1)
	if x.in.trace {
		x.in.mu.Lock()
		x.in.lines = append(x.in.lines, r.curl(x))
		x.in.mu.Unlock()
	}
	if r.roles.create == nil || x.op != r.roles.create.id {
		return
	}
	x.sent, _ = r.sentMembers(x.reqBody)
	blame, _ := x.req.Context().Value(blameKey{}).(string)
	x.in.model.sending(x.sent, idempotencyKey(x.req.Header) != "", blame)
}

// members decodes a JSON object, each member as canonical JSON text.
func members(b []byte) (map[string]string, bool) {
	m, ok := decodeObject(b)
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = canonical(v)
	}
	return out, true
}

// answerPet decodes a pet in an answer: its id and its other members that
// the contract's pet names. The objects a server sends are open (a later
// minor version may add members, and a client must ignore those it does
// not know), so a member more is not judged: docs/conformance-kit.md.
func (r *run) answerPet(m map[string]string) (int64, map[string]string, bool) {
	id, err := strconv.ParseInt(m["id"], 10, 64)
	if err != nil {
		return 0, nil, false
	}
	var named openapi3.Schemas
	if r.roles.create != nil && r.roles.create.created != nil {
		named = r.roles.create.created.Properties
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

// observe judges an answer against the model and teaches it.
func (r *run) observe(x *exchange) {
	var vs []violation
	var counted []string
	switch {
	case r.roles.create != nil && x.op == r.roles.create.id:
		vs, counted = r.observeCreate(x), []string{"stored_as_sent"}
	case r.roles.get != nil && x.op == r.roles.get.id:
		vs, counted = r.observeGet(x), []string{"stored_as_sent"}
	case r.roles.list != nil && x.op == r.roles.list.id && x.status == http.StatusOK:
		vs, counted = r.observeList(x), []string{"pagination", "ordering", "refused_write"}
	}
	for _, v := range vs {
		x.in.record(v.check, x.op, r.fail(x, v.want, v.got))
	}
	for _, c := range counted {
		x.in.record(c, x.op, nil)
	}
}

func (r *run) observeCreate(x *exchange) []violation {
	o := createObs{tenant: x.tenant, key: idempotencyKey(x.req.Header), sent: x.sent, status: x.status, sentAt: x.sentAt, doneAt: x.doneAt}
	if x.status >= 400 {
		o.code, _ = errorCode(x.body)
	}
	if x.status == http.StatusCreated {
		if m, ok := members(x.body); ok {
			o.id, o.answer, _ = r.answerPet(m)
		}
		o.location = x.header.Get("Location")
		o.replayed = x.header.Get("Idempotent-Replayed") == "true"
	}
	return x.in.model.created(o)
}

func (r *run) observeGet(x *exchange) []violation {
	seg := x.req.URL.Path[strings.LastIndex(x.req.URL.Path, "/")+1:]
	id, err := strconv.ParseInt(seg, 10, 64)
	if err != nil || strconv.FormatInt(id, 10) != seg {
		return nil
	}
	o := getObs{id: id, status: x.status, sentAt: x.sentAt, doneAt: x.doneAt}
	if x.status == http.StatusOK {
		if m, ok := members(x.body); ok {
			o.gotID, o.answer, _ = r.answerPet(m)
		}
	}
	return x.in.model.got(o)
}

// observeList judges a page of a valid listing (one the contract answers
// 200); the pages of invalid requests are the negative cases' business.
func (r *run) observeList(x *exchange) []violation {
	q, ok := r.listQuery(x.req.URL.RawQuery)
	if !ok {
		return nil
	}
	var page []json.RawMessage
	if json.Unmarshal(x.body, &page) != nil {
		return nil
	}
	for _, raw := range page {
		m, ok := members(raw)
		id, rest, ok2 := r.answerPet(m)
		if !ok || !ok2 {
			return nil // the schema check speaks for it
		}
		q.ids, q.pets = append(q.ids, id), append(q.pets, rest)
	}
	if next := nextLink(x.header); next != "" {
		q.next, q.nextQ = true, map[string]string{}
		if u, err := url.Parse(next); err == nil {
			for k, vs := range u.Query() {
				q.nextQ[k] = strings.Join(vs, ",")
			}
		}
	}
	q.sentAt, q.doneAt = x.sentAt, x.doneAt
	return x.in.model.page(q)
}

// listQuery reads a listing's query as the model needs it: after, limit
// (its default when absent) and the filter; ok is false for a query the
// contract refuses.
func (r *run) listQuery(raw string) (pageObs, bool) {
	var o pageObs
	q, err := url.ParseQuery(raw)
	if err != nil {
		return o, false
	}
	o.limit = r.bounds.limitDefault
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
			o.after = n
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > r.bounds.limitMax || strconv.Itoa(n) != v {
				return o, false
			}
			o.limit = n
		case r.roles.filter:
			o.filter = v
		default:
			return o, false
		}
	}
	return o, o.limit > 0
}

// errorCode is the code member of body, an Error; ok is false when body
// does not decode as one.
func errorCode(body []byte) (code string, ok bool) {
	var e struct {
		Code string `json:"code"`
	}
	err := json.Unmarshal(body, &e)
	return e.Code, err == nil
}

// petID is the id of body, a pet.
func petID(body []byte) (int64, bool) {
	pet, ok := decodeObject(body)
	if !ok {
		return 0, false
	}
	n, ok := pet["id"].(json.Number)
	if !ok {
		return 0, false
	}
	id, err := n.Int64()
	return id, err == nil
}

// decodeObject decodes one JSON object, its numbers exact.
func decodeObject(b []byte) (map[string]any, bool) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}
