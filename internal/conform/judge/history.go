package judge

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/petstore/petstore/internal/check"
	"github.com/petstore/petstore/internal/conform/report"
	"github.com/petstore/petstore/internal/conform/wire"
	"github.com/petstore/petstore/internal/history"
)

// The kit's history: every exchange is an op of internal/history, fed to
// the checker's model (internal/check) as it leaves (Invoke) and as its
// answer comes (Complete), and written to a history.Writer when one is
// given. The judgments are the checker's: the kit only says what it sent
// and what came back, and records each anomaly as a failure of its check
// at the request that showed it. `petstore-chaos check` replays a saved
// history through the same checker (check.Replay).

// Pets is what the history needs of the spec and of the run to read an
// exchange as an op of the model; the runner answers it.
type Pets interface {
	// CreateOp, GetOp and ListOp are the operation ids of the create, the
	// get and the listing the model follows; "" when the spec has none.
	CreateOp() string
	GetOp() string
	ListOp() string
	// SentMembers are a create's body's members, as canonical JSON text,
	// the defaults of those it leaves out applied.
	SentMembers(body []byte) (map[string]string, bool)
	// AnswerPet decodes a pet of an answer: its id, and the other members
	// the contract's pet names, as canonical JSON text in the form the
	// model compares them in.
	AnswerPet(body []byte) (int64, map[string]string, bool)
	// ListQuery reads a listing's query; ok is false for one the contract
	// refuses.
	ListQuery(raw string) (history.Op, bool)
	// ReleaseFor are the pets x may change, a request to an operation the
	// model does not follow (all: every pet).
	ReleaseFor(x *Exchange) (ids []int64, all bool)
	// Curl is the curl line of x's request.
	Curl(x *Exchange) string
	// Fail makes the Failure of x (Facts.Fail).
	Fail(x *Exchange, want, got string) *report.Failure
}

// History feeds every exchange of a run to the checker's model and to the
// history written.
type History struct {
	pets     Pets
	defaults history.Members // the contract's defaults (history.Contract)
	model    *check.Model
	w        *history.Writer // nil: none written
	clock    atomic.Uint64   // the history's time: a tick an op's invocation or completion
	order    sync.Mutex      // a tick and the model's step of it, together
}

// NewHistory is the history of a run on a target whose contract says c,
// written to w (nil: none): its first line says c.
func NewHistory(c history.Contract, w *history.Writer, pets Pets) *History {
	h := &History{pets: pets, w: w, defaults: c.Defaults}
	h.Note(&history.Op{Kind: history.Begin, Kit: history.Kit{Contract: &c}})
	h.model = check.NewModel(c)
	return h
}

// Confirmed are the pets the model holds acknowledged (check.Model).
func (h *History) Confirmed() []int64 { return h.model.Confirmed() }

// Close ends the history written, if any.
func (h *History) Close() error {
	if h.w == nil {
		return nil
	}
	return h.w.Close()
}

// Note records op, which has no exchange (a Begin, a Scope, a Merge, a
// release): it takes effect now.
func (h *History) Note(op *history.Op) {
	h.Invoke(op)
	op.Complete = op.Invoke
	h.Write(op)
}

// Invoke feeds op's invocation to the model at the next tick of the run's
// clock, and Complete its completion: a tick and the model's step of it
// under one lock, so that the order of the ticks is the order the model
// saw, and Replay, which orders a saved history by its ticks, judges it as
// the run did.
func (h *History) Invoke(op *history.Op) {
	h.order.Lock()
	defer h.order.Unlock()
	op.Invoke = int64(h.clock.Add(1))
	if h.model != nil {
		h.model.Invoke(op)
	}
}

func (h *History) Complete(op *history.Op) []check.Anomaly {
	h.order.Lock()
	defer h.order.Unlock()
	op.Complete = int64(h.clock.Add(1))
	return h.model.Complete(op)
}

// Write adds op to the history, if one is written.
func (h *History) Write(op *history.Op) {
	if h.w != nil {
		h.w.Add(*op)
	}
}

// Sending notes a request as it leaves: its op as the model needs it (a create's members; the pets an operation the model does not
// follow may change).
func (h *History) Sending(x *Exchange) {
	op := &history.Op{Kind: history.Other, Process: x.In.Process, Kit: history.Kit{Operation: x.Op}}
	op.Tenant = x.Tenant
	op.Release, op.ReleaseAll = h.pets.ReleaseFor(x)
	x.Hop = op
	x.In.AddLine(func() string { return h.pets.Curl(x) })
	switch {
	case x.Op != "" && x.Op == h.pets.CreateOp():
		op.Kind, op.Key = history.Create, IdempotencyKey(x.Req.Header)
		op.Sent, _ = h.pets.SentMembers(x.ReqBody)
		op.Left = h.leftOut(x.ReqBody)
		op.Blame, _ = x.Req.Context().Value(blameKey{}).(string)
	case x.Op != "" && x.Op == h.pets.GetOp():
		seg := x.Req.URL.Path[strings.LastIndex(x.Req.URL.Path, "/")+1:]
		if id, err := strconv.ParseInt(seg, 10, 64); err == nil && strconv.FormatInt(id, 10) == seg {
			op.Kind, op.ID = history.Get, id
		}
	case x.Op != "" && x.Op == h.pets.ListOp():
		if q, ok := h.pets.ListQuery(x.Req.URL.RawQuery); ok {
			op.Kind, op.After, op.Limit, op.Filter = history.List, q.After, q.Limit, q.Filter
		}
	}
	h.Invoke(op)
}

// leftOut are the members of the contract's defaults a create's body (a
// JSON object) leaves out, in order.
func (h *History) leftOut(body []byte) []string {
	m, ok := DecodeObject(body)
	if !ok {
		return nil
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(h.defaults)) {
		if _, sent := m[k]; !sent {
			out = append(out, k)
		}
	}
	return out
}

// Observe completes x's op with its answer, has the model judge it, and
// records what the model found.
func (h *History) Observe(x *Exchange) {
	op := x.Hop
	op.Status = x.Status
	if x.Status >= 400 {
		op.Code, _ = wire.ErrorCode(x.Body)
	}
	op.Outcome = opOutcome(op)
	var counted []string
	switch {
	case x.Op != "" && x.Op == h.pets.CreateOp():
		h.answered(op, x)
		counted = []string{"stored_as_sent"}
		if len(op.Left) > 0 && x.Status == http.StatusCreated {
			counted = append(counted, "default_status")
		}
	case x.Op != "" && x.Op == h.pets.GetOp():
		h.answered(op, x)
		counted = []string{"stored_as_sent"}
	case x.Op != "" && x.Op == h.pets.ListOp() && x.Status == http.StatusOK:
		page := &history.Op{}
		if x.PageRead = h.listed(page, x); x.PageRead {
			x.Page = page.IDs
		}
		if op.Kind == history.List && x.PageRead {
			op.IDs, op.Answers, op.Next, op.NextQuery = page.IDs, page.Answers, page.Next, page.NextQuery
		} else {
			op.Kind = history.Other
		}
		counted = []string{"pagination", "ordering", "refused_write"}
	}
	if op.Kind == history.List && x.Status != http.StatusOK {
		op.Kind = history.Other
	}
	for _, a := range h.Complete(op) {
		f := h.pets.Fail(x, a.Want, a.Got)
		f.Kind = a.Kind
		x.In.Record(a.Check, x.Op, f)
	}
	for _, c := range counted {
		x.In.Record(c, x.Op, nil)
	}
	h.Write(op)
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
func (h *History) answered(op *history.Op, x *Exchange) {
	if x.Status == http.StatusCreated {
		op.Location = x.Header.Get("Location")
		op.Replayed = x.Header.Get("Idempotent-Replayed") == "true"
	}
	if x.Status != http.StatusCreated && x.Status != http.StatusOK {
		return
	}
	if id, rest, ok := h.pets.AnswerPet(x.Body); ok {
		op.GotID, op.Got = id, rest
	}
}

// listed adds to a page's op its pets and its next link; false when the
// page does not read as pets (the schema check speaks for it).
func (h *History) listed(op *history.Op, x *Exchange) bool {
	var page []json.RawMessage
	if json.Unmarshal(x.Body, &page) != nil {
		return false
	}
	for _, raw := range page {
		id, rest, ok := h.pets.AnswerPet(raw)
		if !ok {
			return false
		}
		op.IDs, op.Answers = append(op.IDs, id), append(op.Answers, rest)
	}
	if next := NextLink(x.Header); next != "" {
		op.Next, op.NextQuery = true, map[string]string{}
		if u, err := url.Parse(next); err == nil {
			for k, vs := range u.Query() {
				op.NextQuery[k] = strings.Join(vs, ",")
			}
		}
	}
	return true
}

// blameKey names, in a request's context, the check a pet of its name fails
// when no acknowledged create accounts for it.
type blameKey struct{}

// WithBlame is ctx, whose creates' pets, when no acknowledged create
// accounts for them, fail check.
func WithBlame(ctx context.Context, check string) context.Context {
	return context.WithValue(ctx, blameKey{}, check)
}

// IdempotencyKey is the one Idempotency-Key of h, without the quotes of
// its structured-field form, or "".
func IdempotencyKey(h http.Header) string {
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

var nextRE = regexp.MustCompile(`<([^>]*)>\s*;\s*rel="?next"?`)

// NextLink returns the target of a Link rel="next", or "".
func NextLink(h http.Header) string {
	for _, v := range h.Values("Link") {
		if m := nextRE.FindStringSubmatch(v); m != nil {
			return m[1]
		}
	}
	return ""
}
