package conform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/petstore/petstore/internal/check"
	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/conform/wire"
)

// method_semantics: the meaning HTTP gives a write, for any operation of
// the spec, one the kit was written for or not. The phase only makes
// requests, and keeps each as a call of a history (check.Call); the
// checker (check.MethodSemantics) judges that history. The requests, for
// each write operation a rule covers (semanticRule):
//
//   - the create (a POST to the collection): a pet made, read at its
//     Location, then a walk of the listing from above every pet the run
//     knew, to its end: one pet with the members sent, at its Location;
//   - a DELETE of the collection's item: a pet made for it, read, deleted,
//     read again, the walk, deleted again, read again;
//   - a PUT or PATCH of the collection's item (semantics_write.go);
//   - the links of each write's answer, followed (semantics_links.go).
//
// An operation no rule covers (another POST, a PUT or PATCH with no JSON
// body, a GET the
// model does not follow) is named under Incomplete: its meaning is not
// judged, and the run cannot pass (noteUnmodelled).

// semanticRule names the rule of method_semantics that judges op, or ""
// when none does (the model's listing and get are the model's).
func (r *run) semanticRule(op *cases.Operation) string {
	switch {
	case r.roles.Create == nil || r.roles.List == nil || r.roles.Get == nil:
		return ""
	case op == r.roles.Create:
		return "a POST to a collection creates exactly one resource, at its Location (RFC 9110 §9.3.3, §15.3.2)"
	case op.Method == http.MethodDelete && op.Path == r.roles.Get.Path:
		return "after a DELETE, a GET of the resource is 404 or 410 and listings omit it; repeated, it leaves the same state (RFC 9110 §9.3.5, §9.2.2)"
	case op.Method == http.MethodPut && r.isItemWrite(op):
		return "after a PUT, reads show each member sent; repeated, it is answered 2xx and leaves the same state (RFC 9110 §9.3.4, §9.2.2)"
	case op.Method == http.MethodPatch && r.isItemWrite(op):
		return "after a PATCH, reads show each member sent and the others as they were (RFC 5789, a merge patch: RFC 7396)"
	}
	return ""
}

// semantics is the history of the phase: each call and its exchange.
type semantics struct {
	r     *run
	calls []check.Call
	xs    []*judge.Exchange
}

// methodSemantics is the phase of method_semantics.
func (r *run) methodSemantics(ctx context.Context) error {
	if r.semanticRule(r.roles.Create) == "" {
		return nil // no rule covers anything: noteUnmodelled named each operation
	}
	s := &semantics{r: r}
	err := s.run(ctx)
	if err != nil && !errors.Is(err, wire.ErrBudget) {
		return err
	}
	s.judge()
	return err
}

// run makes the requests: the pets first, each read, one walk that shows
// them, then each delete's, PUT's or PATCH's.
func (s *semantics) run(ctx context.Context) error {
	r := s.r
	var writes []*cases.Operation // the deletes, PUTs and PATCHes
	for _, op := range r.ops {
		if op != r.roles.Create && r.semanticRule(op) != "" {
			writes = append(writes, op)
		}
	}
	from := slices.Max(append(r.hist.Confirmed(), r.FirstID(), 0))
	ids := make([]int64, 1+len(writes))
	for i := range ids {
		x, err := s.send(ctx, r.reqs.CreateReq(cases.MustJSON(r.reqs.NewPet("conform-semantics", nil)), nil))
		if err != nil {
			return err
		}
		id, ok := judge.PetID(x.Body)
		if x.Status != http.StatusCreated || !ok {
			return nil // the checker says the create did nothing to judge
		}
		ids[i] = id
	}
	for _, id := range ids {
		if _, err := s.send(ctx, wire.Request{Method: http.MethodGet, Target: r.reqs.GetTarget(id)}); err != nil {
			return err
		}
	}
	if err := s.walk(ctx, from); err != nil {
		return err
	}
	for i, op := range writes {
		flow := s.deleteFlow
		if op.Method != http.MethodDelete {
			flow = s.writeFlow
		}
		if err := flow(ctx, op, ids[i+1], from); err != nil {
			return err
		}
	}
	return nil
}

// deleteFlow deletes pet id by op: read after, the walk, deleted again,
// read again.
func (s *semantics) deleteFlow(ctx context.Context, op *cases.Operation, id, from int64) error {
	values := map[string]string{}
	for _, p := range op.InPath {
		values[p.Name] = strconv.FormatInt(id, 10)
	}
	del := wire.Request{Method: op.Method, Target: op.Target(values, "")}
	get := wire.Request{Method: http.MethodGet, Target: s.r.reqs.GetTarget(id)}
	for _, req := range []wire.Request{del, get} {
		if _, err := s.send(ctx, req); err != nil {
			return err
		}
	}
	if err := s.walk(ctx, from); err != nil {
		return err
	}
	for _, req := range []wire.Request{del, get} {
		if _, err := s.send(ctx, req); err != nil {
			return err
		}
	}
	return nil
}

// send sends req and keeps it as a call.
func (s *semantics) send(ctx context.Context, req wire.Request) (*judge.Exchange, error) {
	x, err := s.r.Send(ctx, req)
	if err != nil {
		return nil, err
	}
	c := check.Call{Operation: x.Op, Method: x.Req.Method, Target: s.r.below(x.Req.URL), Status: x.Status}
	if loc := x.Header.Get("Location"); loc != "" && x.Status/100 == 2 {
		if u, err := x.Req.URL.Parse(loc); err == nil {
			c.Location = s.r.below(u)
		}
	}
	switch {
	case x.Op == s.r.CreateOp():
		c.Sent, _ = s.r.SentMembers(x.ReqBody)
	case x.Req.Method == http.MethodPut || x.Req.Method == http.MethodPatch:
		c.Sent = s.r.writeSent(x)
	}
	if x.Op == s.r.GetOp() && x.Status == http.StatusOK {
		_, c.Got, _ = s.r.AnswerPet(x.Body)
	}
	s.keep(c, x)
	if !safeMethod(x.Req.Method) && x.Status/100 == 2 {
		return x, s.follow(ctx, x, len(s.calls)-1)
	}
	return x, nil
}

func (s *semantics) keep(c check.Call, x *judge.Exchange) {
	s.calls, s.xs = append(s.calls, c), append(s.xs, x)
}

// below is u's path below the base path: the target of an operation.
func (r *run) below(u *url.URL) string {
	if p, ok := strings.CutPrefix(u.Path, r.base.Path); ok && strings.HasPrefix(p, "/") {
		return p
	}
	return u.Path
}

// walk reads the listing from after to its end, by its next links, as one
// call: whole when it got there.
func (s *semantics) walk(ctx context.Context, after int64) error {
	r := s.r
	c := check.Call{Operation: r.ListOp(), Method: http.MethodGet, Target: r.roles.List.Path, Listing: true}
	target := r.reqs.ListTarget("after=" + strconv.FormatInt(after, 10) + "&limit=" + strconv.Itoa(r.bounds.LimitMax))
	var last *judge.Exchange
	for target != "" {
		x, err := r.Send(ctx, wire.Request{Method: http.MethodGet, Target: target})
		if err != nil {
			return err
		}
		last, c.Status = x, x.Status
		var page []json.RawMessage
		if x.Status != http.StatusOK || json.Unmarshal(x.Body, &page) != nil {
			break // the model and the schema judge it
		}
		for _, raw := range page {
			if id, members, ok := r.AnswerPet(raw); ok {
				c.Listed = append(c.Listed, check.Listed{Target: r.roles.Get.Target(map[string]string{r.roles.Get.InPath[0].Name: strconv.FormatInt(id, 10)}, ""), Members: members})
			}
		}
		next := judge.NextLink(x.Header)
		if next == "" || len(page) == 0 {
			c.Whole = next == ""
			break
		}
		if target, err = r.Resolve(next); err != nil {
			break
		}
	}
	if last != nil {
		c.Listing = c.Status == http.StatusOK
		s.keep(c, last)
	}
	return nil
}

// judge has the checker judge the phase's history, and records what it
// found: a failure of the operation whose meaning it shows broken, with
// the write's curl line and the one that showed it.
func (s *semantics) judge() {
	r := s.r
	found := check.MethodSemantics(s.calls)
	failed := map[string]int{}
	for _, f := range found.Findings {
		x := s.xs[f.Call]
		fail := r.Fail(x, f.Want, f.Got)
		fail.Kind = f.Kind
		fail.Curl = r.Curl(s.xs[f.Write]) + "\n" + fail.Curl
		x.In.Record(check.CheckMethodSemantics, f.Operation, fail)
		failed[f.Operation]++
	}
	for _, op := range slices.Sorted(maps.Keys(found.Judged)) {
		for range found.Judged[op] - failed[op] {
			r.Record(check.CheckMethodSemantics, op, nil)
		}
	}
	for _, op := range r.ops {
		why, unjudged := found.Unjudged[op.ID]
		if !unjudged && found.Judged[op.ID] == 0 && r.semanticRule(op) != "" {
			unjudged, why = true, "the run made no request to it that the rule judges"
		}
		if unjudged {
			r.Incomplete(check.CheckMethodSemantics, "operation "+op.ID, fmt.Sprintf("its meaning went unjudged: %s (%s)", why, r.semanticRule(op)))
		}
	}
}
