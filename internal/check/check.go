// Package check judges a history (internal/history) against the promises
// of openapi.yaml, with no I/O: one vocabulary of anomalies (Meaning) and
// verdicts valid, invalid or unknown, for two kinds of history, each by a
// Checker (checker.go: a history in, a Judgement out; checkers compose).
// Check (the Audit checker) audits a chaos run's against the store's final
// state; Model (the Kit checker) judges a conformance kit's, fed op by op
// while the kit runs or all at once from a saved file (Replay), the same
// code either way. Both compare a pet's members by one rule
// (memberRules.alters, over history.Members), and judge a page of the
// listing and a get by one rule each (page.go). Check's promises:
//
//   - lost: every acknowledged create (201) is stored, as acknowledged,
//     and as it was sent: every member, defaults applied at every depth,
//     each value compared by the contract's rules (package value: a
//     float as its float32, a date-time as its instant);
//   - doubled: an Idempotency-Key made at most one pet, and every answer to
//     it named the same pet;
//   - phantom: every stored pet comes from a create that was acknowledged
//     or whose outcome was unknown (indeterminate), not from one that was
//     refused, and is stored as that create sent it;
//   - aborted reads: every pet a read returned (a walk's page, a get) is
//     stored at the end: a read never shows a create that did not last;
//   - wrong reads: a read (a get, a walk's page, a replay of a create
//     acknowledged before) showed every pet as it is stored, every member
//     of it (and a get the pet it asked for);
//   - walk anomalies: every walk, up to where it ended, visited ids strictly
//     ascending, each page above its cursor and within its limit, filtered
//     pets of its status only; followed Link rel="next" targets that keep
//     the query and move the cursor to the page's last id (a link that
//     loops is one that does not); was never refused a cursor; and saw
//     every stored pet below the last id it visited, and every pet
//     acknowledged before it began (below that id, if it did not finish);
//   - get 404 after ack: getPet of an acknowledged id, invoked after the
//     acknowledgement, never answered 404;
//   - unexpected answers: every answer is one the contract documents for
//     what the workload sent (see expected), and keeps openapi.yaml.
//
// It relies on one convention of the workload: every create has a name of
// its own (a key's retries share it), so a stored or read pet names its
// create. A history that breaks it fails the audit (Short).
package check

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/history"
)

// Options are the run's own requirements, beside the anomalies.
type Options struct {
	MinAcked  int // acknowledged creates, at least
	MinFaults int // faults injected, at least
	// NewPet is the schema of a create's body: a member a create left out
	// is stored with its default, at every depth, and each value compared
	// by the contract's rules (package value). Without it, only what was
	// sent is expected, each member as sent.
	NewPet *openapi3.Schema
}

// Result is what the audit found.
type Result struct {
	// Ops counts operations by row (see Rows) and outcome.
	Ops map[string]map[string]int
	// Answers counts the answers of every request by row and answer: the
	// status and the Error code ("503 unavailable"), or "no answer".
	Answers map[string]map[string]int
	// Faults counts the faults by kind.
	Faults map[string]int
	// Acked is the number of distinct pets acknowledged; Stored the number
	// of pets in the final state.
	Acked, Stored int
	// KeylessUnknown counts the keyless creates that ended indeterminate
	// (never retried), and KeylessUnknownStored those of them stored.
	KeylessUnknown, KeylessUnknownStored int
	// Walks is the number of walks that reached the last page; Reads the
	// number of pets reads returned (each version of a pet once).
	Walks, Reads int
	// Requests and Answered give the availability.
	Requests, Answered int

	// The anomalies, each described in a line, by kind (see Kinds).
	Lost, Doubled, Phantom, AbortedReads, WrongReads, WalkAnomalies, GetAfterAck, Unexpected []string
	// Short lists what the run lacked against Options, and the ways the
	// history broke the audit's conventions.
	Short []string
}

// The kinds of anomaly, as the table names them.
const (
	KindLost          = "lost"
	KindDoubled       = "doubled"
	KindPhantom       = "phantom"
	KindAbortedReads  = "aborted reads"
	KindWrongReads    = "wrong reads"
	KindWalkAnomalies = "walk anomalies"
	KindGetAfterAck   = "get 404 after ack"
	KindUnexpected    = "unexpected answers"
)

// Kinds are the kinds of anomaly, in the table's order.
var Kinds = []string{KindLost, KindDoubled, KindPhantom, KindAbortedReads, KindWrongReads, KindWalkAnomalies, KindGetAfterAck, KindUnexpected}

// Of returns the anomalies of kind.
func (r *Result) Of(kind string) []string {
	switch kind {
	case KindLost:
		return r.Lost
	case KindDoubled:
		return r.Doubled
	case KindPhantom:
		return r.Phantom
	case KindAbortedReads:
		return r.AbortedReads
	case KindWrongReads:
		return r.WrongReads
	case KindWalkAnomalies:
		return r.WalkAnomalies
	case KindGetAfterAck:
		return r.GetAfterAck
	case KindUnexpected:
		return r.Unexpected
	}
	return nil
}

// The rows of the operations table: the kinds of operation the workload
// makes.
const (
	RowKeyed   = "create, keyed"
	RowKeyless = "create, keyless"
	RowGet     = "get"
	RowWalk    = "walk"
)

// Rows are the rows in the order tables print them.
var Rows = []string{RowKeyed, RowKeyless, RowGet, RowWalk}

// Anomalies is the number of anomalies of every kind.
func (r *Result) Anomalies() int {
	n := 0
	for _, k := range Kinds {
		n += len(r.Of(k))
	}
	return n
}

// OK reports whether the run passes: no anomaly, and nothing short.
func (r *Result) OK() bool { return r.Anomalies() == 0 && len(r.Short) == 0 }

// FaultsTotal is the number of faults injected.
func (r *Result) FaultsTotal() int {
	n := 0
	for _, v := range r.Faults {
		n += v
	}
	return n
}

// request is one logical create: the ops of one key, or one keyless op.
type request struct {
	key    string
	name   string
	ops    []*history.Op
	stored []history.Pet
	// replays are the answers to its retries that replayed a pet an earlier
	// attempt was acknowledged with: reads of it (auditReads).
	replays []*history.Op
}

// ack is an acknowledged pet and when it was first acknowledged.
type ack struct {
	pet  history.Pet
	done int64
}

// audit is the state of one Check: the history indexed, and the result.
type audit struct {
	r        *Result
	newPet   *openapi3.Schema
	ops      []history.Op
	requests []*request
	byKey    map[string]*request
	byName   map[string][]*request
	acks     map[int64]*ack
	stored   map[int64]history.Pet
	byID     []history.Pet // stored, by id
}

// Check audits ops against the final state. It is a pure function of its
// arguments: any producer of a history (the chaos run, the rolling deploy)
// may call it.
func Check(ops []history.Op, state []history.Pet, opt Options) *Result {
	a := &audit{
		r: &Result{
			Ops: map[string]map[string]int{}, Answers: map[string]map[string]int{},
			Faults: map[string]int{}, Stored: len(state),
		},
		newPet: opt.NewPet,
		ops:    ops, byKey: map[string]*request{}, byName: map[string][]*request{},
		acks: map[int64]*ack{}, stored: map[int64]history.Pet{},
	}
	for _, row := range Rows {
		a.r.Ops[row], a.r.Answers[row] = map[string]int{}, map[string]int{}
	}
	a.groupCreates()
	a.matchStored(state)
	for _, req := range a.requests {
		a.auditCreate(req)
	}
	a.auditAnswers()
	a.auditWalks()
	a.auditReads()
	a.auditGets()
	a.requireOptions(opt)
	return a.r
}

// groupCreates counts every op by row, outcome and answer, and groups the
// creates into requests: by key, and by name for the keyless.
func (a *audit) groupCreates() {
	r := a.r
	for i := range a.ops {
		op := &a.ops[i]
		if op.Kind == history.Fault {
			r.Faults[op.Fault]++
			continue
		}
		row := RowOf(op)
		if row == "" {
			continue
		}
		r.Requests += op.Requests
		r.Answered += op.Answered
		r.Ops[row][op.Outcome]++
		if op.Kind == history.Walk {
			for _, p := range op.Pages {
				r.Answers[row][answerName(p.Status, p.Code)]++
			}
		} else {
			r.Answers[row][answerName(op.Status, op.Code)]++
		}
		if op.Kind != history.Create {
			continue
		}
		if op.Key == "" && op.Outcome == history.Indeterminate {
			r.KeylessUnknown++
		}
		a.addCreate(op)
	}
	r.Acked = len(a.acks)
}

// RowOf is op's row; "" for a fault.
func RowOf(op *history.Op) string {
	switch {
	case op.Kind == history.Get:
		return RowGet
	case op.Kind == history.Walk:
		return RowWalk
	case op.Kind == history.Create && op.Key != "":
		return RowKeyed
	case op.Kind == history.Create:
		return RowKeyless
	}
	return ""
}

func answerName(status int, code string) string {
	if status == 0 {
		return "no answer"
	}
	return strings.TrimSpace(fmt.Sprintf("%d %s", status, code))
}

// addCreate files a create under its request, and its acknowledgement.
func (a *audit) addCreate(op *history.Op) {
	name := ""
	if op.Body != nil {
		name = op.Body.Name
	}
	req := a.byKey[op.Key]
	if op.Key == "" || req == nil {
		req = &request{key: op.Key, name: name}
		if op.Key != "" {
			a.byKey[op.Key] = req
		}
		if others := a.byName[name]; len(others) > 0 {
			a.r.Short = append(a.r.Short, fmt.Sprintf("name %q sent by %d creates: the audit needs a name per create", name, len(others)+1))
		}
		a.requests = append(a.requests, req)
		a.byName[name] = append(a.byName[name], req)
	}
	req.ops = append(req.ops, op)
	if op.Outcome == history.OK && op.Pet != nil {
		if k, ok := a.acks[op.Pet.ID]; !ok || op.Complete < k.done {
			a.acks[op.Pet.ID] = &ack{pet: *op.Pet, done: op.Complete}
		}
	}
}

// matchStored files each stored pet under the request that sent its name.
func (a *audit) matchStored(state []history.Pet) {
	for _, p := range state {
		a.stored[p.ID] = p
		reqs := a.byName[p.Name]
		if len(reqs) == 0 {
			a.r.Phantom = append(a.r.Phantom, fmt.Sprintf("pet %d %q: no create sent this name", p.ID, p.Name))
			continue
		}
		// Names are a create's own; were one reused (Short says so),
		// the first request without a pet takes it.
		req := reqs[0]
		for _, q := range reqs {
			if len(q.stored) == 0 {
				req = q
				break
			}
		}
		req.stored = append(req.stored, p)
	}
	a.byID = slices.SortedFunc(maps.Values(a.stored), func(x, y history.Pet) int { return cmp.Compare(x.ID, y.ID) })
}

// auditCreate checks one request: lost, doubled, phantom.
func (a *audit) auditCreate(req *request) {
	r := a.r
	what := "keyless create " + fmt.Sprintf("%q", req.name)
	if req.key != "" {
		what = fmt.Sprintf("key %s", req.key)
	}
	var ids []int64
	mayExist, acked := false, false
	var sent *history.Body
	for _, op := range req.ops {
		if op.Body != nil {
			sent = op.Body
		}
		switch op.Outcome {
		case history.Indeterminate:
			mayExist = true
		case history.OK:
			if op.Replayed && !mayExist && op.Pet != nil {
				// Every earlier attempt said it wrote nothing (a 4xx, a
				// 503 unavailable, or not sent), yet one of them wrote
				// the pet this answer replays.
				r.Phantom = append(r.Phantom, fmt.Sprintf("%s: attempt %d replays pet %d, but every earlier attempt said nothing was written: %s", what, op.Attempt, op.Pet.ID, outcomes(req.ops, op.Attempt)))
			}
			mayExist = true
			if op.Pet == nil {
				continue
			}
			if op.Replayed && acked && slices.Contains(ids, op.Pet.ID) {
				req.replays = append(req.replays, op) // a read of the pet
				continue
			}
			acked = true
			if !slices.Contains(ids, op.Pet.ID) {
				ids = append(ids, op.Pet.ID)
			}
			p, ok := a.stored[op.Pet.ID]
			switch {
			case !ok:
				r.Lost = append(r.Lost, fmt.Sprintf("%s: pet %d acknowledged (attempt %d, replica %s) is not stored", what, op.Pet.ID, op.Attempt, op.Replica))
			case !a.samePet(p, *op.Pet):
				r.Lost = append(r.Lost, fmt.Sprintf("%s: pet %d acknowledged as %+v is stored as %+v", what, op.Pet.ID, *op.Pet, p))
			case op.Body != nil && !a.sameAsSent(p, *op.Body):
				r.Lost = append(r.Lost, fmt.Sprintf("%s: pet %d stored as %+v, but the request was %+v", what, op.Pet.ID, p, *op.Body))
			}
		}
	}
	if len(ids) > 1 {
		r.Doubled = append(r.Doubled, fmt.Sprintf("%s: acknowledged as %d different pets %v", what, len(ids), ids))
	}
	if len(req.stored) > 1 {
		sids := make([]int64, len(req.stored))
		for i, p := range req.stored {
			sids[i] = p.ID
		}
		r.Doubled = append(r.Doubled, fmt.Sprintf("%s: %d pets stored %v", what, len(req.stored), sids))
	}
	switch {
	case len(req.stored) > 0 && !mayExist:
		r.Phantom = append(r.Phantom, fmt.Sprintf("%s: pet %d stored, but every attempt was refused: %s", what, req.stored[0].ID, outcomes(req.ops, len(req.ops)+1)))
	case len(req.stored) > 0 && len(ids) == 0 && sent != nil && !a.sameAsSent(req.stored[0], *sent):
		// Of an acknowledged pet, lost says it.
		r.Phantom = append(r.Phantom, fmt.Sprintf("%s: pet %d stored as %+v, but the request was %+v", what, req.stored[0].ID, req.stored[0], *sent))
	}
	if req.key == "" && len(req.ops) == 1 && req.ops[0].Outcome == history.Indeterminate && len(req.stored) > 0 {
		r.KeylessUnknownStored++
	}
}

// outcomes describes the attempts of a create before attempt before.
func outcomes(ops []*history.Op, before int) string {
	var outs []string
	for _, op := range ops {
		if op.Attempt < before || op.Attempt == 0 {
			outs = append(outs, fmt.Sprintf("%d %s", op.Status, cmp.Or(op.Error, op.Outcome)))
		}
	}
	return strings.Join(outs, "; ")
}

// requireOptions notes what the run lacked against opt.
func (a *audit) requireOptions(opt Options) {
	if a.r.Acked < opt.MinAcked {
		a.r.Short = append(a.r.Short, fmt.Sprintf("%d creates acknowledged, want at least %d", a.r.Acked, opt.MinAcked))
	}
	if n := a.r.FaultsTotal(); n < opt.MinFaults {
		a.r.Short = append(a.r.Short, fmt.Sprintf("%d faults injected, want at least %d", n, opt.MinFaults))
	}
}

func ms(ns int64) string { return fmt.Sprintf("%.0f ms", float64(ns)/1e6) }
