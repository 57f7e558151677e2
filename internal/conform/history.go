package conform

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/petstore/petstore/internal/check"
	"github.com/petstore/petstore/internal/history"
)

// The kit's history: every exchange is an op of internal/history, fed to
// the checker's model (internal/check) as it leaves (Invoke) and as its
// answer comes (Complete), and written to Config.History when one is
// given. The judgments are the checker's: the kit only says what it sent
// and what came back, and records each anomaly as a failure of its check
// at the request that showed it. `petstore-chaos check` replays a saved
// history through the same checker (check.Replay).

// newModel is the checker's model of the target, and the history's first
// line: what it knows of the contract.
func (r *run) newModel() *check.Model {
	c := history.Contract{Filter: r.roles.filter, Defaults: r.defaults(), Request: []string{}}
	if r.roles.create != nil {
		c.Name = r.nameMember()
		c.Request = sortedKeys(r.roles.create.body.Properties)
	}
	r.note(&history.Op{Kind: history.Begin, Kit: history.Kit{Contract: &c}})
	return check.NewModel(c)
}

// note records op, which has no exchange (a Begin, a Scope, a Merge, a
// release): it takes effect now.
func (r *run) note(op *history.Op) {
	r.invoke(op)
	op.Complete = op.Invoke
	r.write(op)
}

// invoke feeds op's invocation to the model at the next tick of the run's
// clock, and complete its completion: a tick and the model's step of it
// under one lock, so that the order of the ticks is the order the model
// saw, and Replay, which orders a saved history by its ticks, judges it as
// the run did.
func (r *run) invoke(op *history.Op) {
	r.order.Lock()
	defer r.order.Unlock()
	op.Invoke = int64(r.clock.Add(1))
	if r.model != nil {
		r.model.Invoke(op)
	}
}

func (r *run) complete(op *history.Op) []check.Anomaly {
	r.order.Lock()
	defer r.order.Unlock()
	op.Complete = int64(r.clock.Add(1))
	return r.model.Complete(op)
}

// write adds op to the history, if one is written.
func (r *run) write(op *history.Op) {
	if r.hist != nil {
		r.hist.Add(*op)
	}
}

// sending notes a request as it leaves: its op as the model needs it (a create's members; the pets an operation the model does not
// follow may change).
func (r *run) sending(x *exchange) {
	op := &history.Op{Kind: history.Other, Process: x.In.Process, Kit: history.Kit{Operation: x.Op}}
	op.Tenant = x.Tenant
	op.Release, op.ReleaseAll = r.releaseFor(x)
	x.Hop = op
	x.In.AddLine(func() string { return r.curl(x) })
	switch {
	case r.roles.create != nil && x.Op == r.roles.create.id:
		op.Kind, op.Key = history.Create, idempotencyKey(x.Req.Header)
		op.Sent, _ = r.sentMembers(x.ReqBody)
		op.Blame, _ = x.Req.Context().Value(blameKey{}).(string)
	case r.roles.get != nil && x.Op == r.roles.get.id:
		seg := x.Req.URL.Path[strings.LastIndex(x.Req.URL.Path, "/")+1:]
		if id, err := strconv.ParseInt(seg, 10, 64); err == nil && strconv.FormatInt(id, 10) == seg {
			op.Kind, op.ID = history.Get, id
		}
	case r.roles.list != nil && x.Op == r.roles.list.id:
		if q, ok := r.listQuery(x.Req.URL.RawQuery); ok {
			op.Kind, op.After, op.Limit, op.Filter = history.List, q.After, q.Limit, q.Filter
		}
	}
	r.invoke(op)
}

// observe completes x's op with its answer, has the model judge it, and
// records what the model found.
func (r *run) observe(x *exchange) {
	op := x.Hop
	op.Status = x.Status
	if x.Status >= 400 {
		op.Code, _ = errorCode(x.Body)
	}
	op.Outcome = opOutcome(op)
	var counted []string
	switch {
	case r.roles.create != nil && x.Op == r.roles.create.id:
		r.answered(op, x)
		counted = []string{"stored_as_sent"}
	case r.roles.get != nil && x.Op == r.roles.get.id:
		r.answered(op, x)
		counted = []string{"stored_as_sent"}
	case r.roles.list != nil && x.Op == r.roles.list.id && x.Status == http.StatusOK:
		if op.Kind == history.List && !r.listed(op, x) {
			op.Kind = history.Other
		}
		counted = []string{"pagination", "ordering", "refused_write"}
	}
	if op.Kind == history.List && x.Status != http.StatusOK {
		op.Kind = history.Other
	}
	for _, a := range r.complete(op) {
		x.In.Record(a.Check, x.Op, r.Fail(x, a.Want, a.Got))
	}
	for _, c := range counted {
		x.In.Record(c, x.Op, nil)
	}
	r.write(op)
}

// opOutcome is how op ended: ok with an answer that says what happened,
// failed with a refusal that wrote nothing, indeterminate without an
// answer or with one that says a create may have happened.
func opOutcome(op *history.Op) string {
	switch {
	case op.Status == 0:
		return history.Indeterminate
	case op.Status < 400 || op.Kind == history.Get && op.Status == http.StatusNotFound:
		return history.OK
	case op.Kind == history.Create && op.Status >= 500 && op.Status != 507 && !(op.Status == 503 && op.Code == "unavailable"):
		return history.Indeterminate
	}
	return history.Failed
}

// answered adds to a create's or a get's op the pet its 201 or 200
// answered, and a 201's headers.
func (r *run) answered(op *history.Op, x *exchange) {
	if x.Status == http.StatusCreated {
		op.Location = x.Header.Get("Location")
		op.Replayed = x.Header.Get("Idempotent-Replayed") == "true"
	}
	if x.Status != http.StatusCreated && x.Status != http.StatusOK {
		return
	}
	if m, ok := members(x.Body); ok {
		if id, rest, ok := r.answerPet(m); ok {
			op.GotID, op.Got = id, rest
		}
	}
}

// listed adds to a page's op its pets and its next link; false when the
// page does not read as pets (the schema check speaks for it).
func (r *run) listed(op *history.Op, x *exchange) bool {
	var page []json.RawMessage
	if json.Unmarshal(x.Body, &page) != nil {
		return false
	}
	for _, raw := range page {
		m, ok := members(raw)
		id, rest, ok2 := r.answerPet(m)
		if !ok || !ok2 {
			return false
		}
		op.IDs, op.Answers = append(op.IDs, id), append(op.Answers, rest)
	}
	if next := nextLink(x.Header); next != "" {
		op.Next, op.NextQuery = true, map[string]string{}
		if u, err := url.Parse(next); err == nil {
			for k, vs := range u.Query() {
				op.NextQuery[k] = strings.Join(vs, ",")
			}
		}
	}
	return true
}
