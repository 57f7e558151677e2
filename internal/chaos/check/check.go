// Package check audits the history of a chaos run (internal/chaos/history)
// against the store's final state, for the promises the API makes:
//
//   - lost: every acknowledged create (201) is stored, as acknowledged;
//   - doubled: an Idempotency-Key made at most one pet, and every answer to
//     it named the same pet;
//   - phantom: every stored pet comes from a create that was acknowledged
//     or whose outcome was unknown (indeterminate), not from one that was
//     refused;
//   - walk anomalies: a walk of the pages that ended without error visited
//     ids strictly ascending (and, filtered, only pets of its status), and
//     visited every stored pet acknowledged before it began; and, since ids are
//     assigned in commit order, every stored pet with an id below the last
//     it visited, whenever that pet was created;
//   - get 404 after ack: getPet of an acknowledged id, invoked after the
//     acknowledgement, never answered 404 (nor another pet).
//
// It relies on one convention of the workload: every create has a name of
// its own (a key's retries share it), so a stored pet names its create.
package check

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/petstore/petstore/internal/chaos/history"
)

// Options are the run's own requirements, beside the anomalies.
type Options struct {
	MinAcked  int // acknowledged creates, at least
	MinFaults int // faults injected, at least
}

// Result is what the audit found.
type Result struct {
	// Ops counts operations by row (see rows) and outcome.
	Ops map[string]map[string]int
	// Faults counts the faults by kind.
	Faults map[string]int
	// Acked is the number of distinct pets acknowledged; Stored the number
	// of pets in the final state.
	Acked, Stored int
	// KeylessUnknown counts the keyless creates that ended indeterminate
	// (never retried), and KeylessUnknownStored those of them stored.
	KeylessUnknown, KeylessUnknownStored int
	// Walks is the number of walks that ended without error.
	Walks int
	// Requests and Answered give the availability.
	Requests, Answered int

	// The anomalies, each described in a line.
	Lost, Doubled, Phantom, WalkAnomalies, GetAfterAck []string
	// Short lists what the run lacked against Options.
	Short []string
}

// The rows of the operations table.
const (
	rowKeyed   = "create, keyed"
	rowKeyless = "create, keyless"
	rowGet     = "get"
	rowWalk    = "walk"
)

var rows = []string{rowKeyed, rowKeyless, rowGet, rowWalk}

// Anomalies is the number of anomalies of every kind.
func (r *Result) Anomalies() int {
	return len(r.Lost) + len(r.Doubled) + len(r.Phantom) + len(r.WalkAnomalies) + len(r.GetAfterAck)
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
}

// ack is an acknowledged pet and when it was first acknowledged.
type ack struct {
	pet  history.Pet
	done int64
}

// Check audits ops against the final state.
func Check(ops []history.Op, state []history.Pet, opt Options) *Result {
	r := &Result{Ops: map[string]map[string]int{}, Faults: map[string]int{}, Stored: len(state)}
	for _, row := range rows {
		r.Ops[row] = map[string]int{}
	}

	// Group the creates into requests, by key, and by name for the keyless.
	byKey := map[string]*request{}
	byName := map[string][]*request{}
	var requests []*request
	acks := map[int64]*ack{}
	for i := range ops {
		op := &ops[i]
		if op.Kind != history.Fault {
			r.Requests += op.Requests
			r.Answered += op.Answered
		}
		switch op.Kind {
		case history.Fault:
			r.Faults[op.Fault]++
			continue
		case history.Get:
			r.Ops[rowGet][op.Outcome]++
			continue
		case history.Walk:
			r.Ops[rowWalk][op.Outcome]++
			continue
		case history.Create:
		default:
			continue
		}
		var req *request
		if op.Key != "" {
			r.Ops[rowKeyed][op.Outcome]++
			req = byKey[op.Key]
		} else {
			r.Ops[rowKeyless][op.Outcome]++
			if op.Outcome == history.Indeterminate {
				r.KeylessUnknown++
			}
		}
		if req == nil {
			req = &request{key: op.Key}
			if op.Body != nil {
				req.name = op.Body.Name
			}
			if op.Key != "" {
				byKey[op.Key] = req
			}
			requests = append(requests, req)
			byName[req.name] = append(byName[req.name], req)
		}
		req.ops = append(req.ops, op)
		if op.Outcome == history.OK && op.Pet != nil {
			if a, ok := acks[op.Pet.ID]; !ok || op.Complete < a.done {
				acks[op.Pet.ID] = &ack{pet: *op.Pet, done: op.Complete}
			}
		}
	}
	r.Acked = len(acks)

	// Match the stored pets to requests by name.
	stored := map[int64]history.Pet{}
	for _, p := range state {
		stored[p.ID] = p
		reqs := byName[p.Name]
		if len(reqs) == 0 {
			r.Phantom = append(r.Phantom, fmt.Sprintf("pet %d %q: no create sent this name", p.ID, p.Name))
			continue
		}
		// Keyless creates have names of their own; were one reused, the
		// first request without a pet takes it.
		req := reqs[0]
		for _, q := range reqs {
			if len(q.stored) == 0 {
				req = q
				break
			}
		}
		req.stored = append(req.stored, p)
	}

	for _, req := range requests {
		r.audit(req, stored)
	}

	r.auditWalks(ops, acks, stored)
	r.auditGets(ops, acks)

	if r.Acked < opt.MinAcked {
		r.Short = append(r.Short, fmt.Sprintf("%d creates acknowledged, want at least %d", r.Acked, opt.MinAcked))
	}
	if n := r.FaultsTotal(); n < opt.MinFaults {
		r.Short = append(r.Short, fmt.Sprintf("%d faults injected, want at least %d", n, opt.MinFaults))
	}
	return r
}

// audit checks one request: lost, doubled, phantom.
func (r *Result) audit(req *request, stored map[int64]history.Pet) {
	what := "keyless create " + fmt.Sprintf("%q", req.name)
	if req.key != "" {
		what = fmt.Sprintf("key %s", req.key)
	}
	var ids []int64
	mayExist := false
	for _, op := range req.ops {
		switch op.Outcome {
		case history.Indeterminate:
			mayExist = true
		case history.OK:
			mayExist = true
			if op.Pet == nil {
				continue
			}
			if !slices.Contains(ids, op.Pet.ID) {
				ids = append(ids, op.Pet.ID)
			}
			p, ok := stored[op.Pet.ID]
			switch {
			case !ok:
				r.Lost = append(r.Lost, fmt.Sprintf("%s: pet %d acknowledged (attempt %d, replica %s) is not stored", what, op.Pet.ID, op.Attempt, op.Replica))
			case p != *op.Pet:
				r.Lost = append(r.Lost, fmt.Sprintf("%s: pet %d acknowledged as %+v is stored as %+v", what, op.Pet.ID, *op.Pet, p))
			case op.Body != nil && (p.Name != op.Body.Name || p.CategoryID != op.Body.CategoryID || p.Status != op.Body.Status):
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
	if len(req.stored) > 0 && !mayExist {
		outs := make([]string, len(req.ops))
		for i, op := range req.ops {
			outs[i] = fmt.Sprintf("%d %s", op.Status, cmp.Or(op.Error, op.Outcome))
		}
		r.Phantom = append(r.Phantom, fmt.Sprintf("%s: pet %d stored, but every attempt was refused: %s", what, req.stored[0].ID, strings.Join(outs, "; ")))
	}
	if req.key == "" && len(req.ops) == 1 && req.ops[0].Outcome == history.Indeterminate && len(req.stored) > 0 {
		r.KeylessUnknownStored++
	}
}

// auditWalks checks each walk that ended without error.
//
// A pet committed after a page was read has an id greater than every id
// that page could show (id order is commit order: pgstore's create lock),
// so a walk that skipped a stored pet below its last id read a page while
// that pet's id was taken but not committed, and some greater id was.
func (r *Result) auditWalks(ops []history.Op, acks map[int64]*ack, stored map[int64]history.Pet) {
	// Acknowledged pets in the order of their acknowledgement.
	acked := slices.SortedFunc(maps.Values(acks), func(a, b *ack) int { return cmp.Compare(a.done, b.done) })
	byID := slices.SortedFunc(maps.Values(stored), func(a, b history.Pet) int { return cmp.Compare(a.ID, b.ID) })
	for i := range ops {
		op := &ops[i]
		if op.Kind != history.Walk || op.Outcome != history.OK {
			continue
		}
		r.Walks++
		what := fmt.Sprintf("walk (process %d, from %s", op.Process, op.Replica)
		if op.Filter != "" {
			what += ", status=" + op.Filter
		}
		what += fmt.Sprintf(", limit %d, %d pets)", op.Limit, len(op.IDs))
		seen := make(map[int64]bool, len(op.IDs))
		for j, id := range op.IDs {
			if j > 0 && id <= op.IDs[j-1] {
				r.WalkAnomalies = append(r.WalkAnomalies, fmt.Sprintf("%s: id %d after %d, not ascending", what, id, op.IDs[j-1]))
			}
			seen[id] = true
			if p, ok := stored[id]; ok && op.Filter != "" && p.Status != op.Filter {
				r.WalkAnomalies = append(r.WalkAnomalies, fmt.Sprintf("%s: visited pet %d of status %s", what, id, p.Status))
			}
		}
		var last int64
		if len(op.IDs) > 0 {
			last = op.IDs[len(op.IDs)-1]
		}
		for _, p := range byID {
			if p.ID >= last {
				break
			}
			if (op.Filter == "" || p.Status == op.Filter) && !seen[p.ID] {
				seen[p.ID] = true // reported once
				r.WalkAnomalies = append(r.WalkAnomalies, fmt.Sprintf("%s: missed pet %d, stored, below the last id visited", what, p.ID))
			}
		}
		for _, a := range acked {
			if a.done >= op.Invoke {
				break
			}
			if op.Filter != "" && a.pet.Status != op.Filter {
				continue
			}
			// A pet not stored at the end is lost, and counted so.
			if _, ok := stored[a.pet.ID]; ok && !seen[a.pet.ID] {
				r.WalkAnomalies = append(r.WalkAnomalies, fmt.Sprintf("%s: missed pet %d, acknowledged %s before the walk began", what, a.pet.ID, ms(op.Invoke-a.done)))
			}
		}
	}
}

// auditGets checks each answered get of an acknowledged id.
func (r *Result) auditGets(ops []history.Op, acks map[int64]*ack) {
	for i := range ops {
		op := &ops[i]
		if op.Kind != history.Get || op.Outcome != history.OK {
			continue
		}
		a, ok := acks[op.ID]
		if !ok || a.done >= op.Invoke {
			continue
		}
		switch {
		case op.Status == 404:
			r.GetAfterAck = append(r.GetAfterAck, fmt.Sprintf("get %d from %s: 404, %s after the pet was acknowledged", op.ID, op.Replica, ms(op.Invoke-a.done)))
		case op.Pet != nil && *op.Pet != a.pet:
			r.GetAfterAck = append(r.GetAfterAck, fmt.Sprintf("get %d from %s: %+v, acknowledged as %+v", op.ID, op.Replica, *op.Pet, a.pet))
		}
	}
}

func ms(ns int64) string { return fmt.Sprintf("%.0f ms", float64(ns)/1e6) }

// Print writes the result table, and the first few anomalies of each kind.
func (r *Result) Print(w io.Writer) {
	fmt.Fprintf(w, "%-18s %8s %8s %14s %8s\n", "operations", "ok", "failed", "indeterminate", "total")
	for _, row := range rows {
		m := r.Ops[row]
		fmt.Fprintf(w, "%-18s %8d %8d %14d %8d\n", row, m[history.OK], m[history.Failed], m[history.Indeterminate],
			m[history.OK]+m[history.Failed]+m[history.Indeterminate])
	}
	kinds := slices.Sorted(maps.Keys(r.Faults))
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, r.Faults[k])
	}
	fmt.Fprintf(w, "%-26s %d (%s)\n", "faults", r.FaultsTotal(), strings.Join(parts, ", "))
	fmt.Fprintf(w, "%-26s %d\n", "pets acknowledged", r.Acked)
	fmt.Fprintf(w, "%-26s %d\n", "pets stored", r.Stored)
	fmt.Fprintf(w, "%-26s %d (%d of them stored; not blamed)\n", "keyless, outcome unknown", r.KeylessUnknown, r.KeylessUnknownStored)
	fmt.Fprintf(w, "%-26s %d\n", "lost", len(r.Lost))
	fmt.Fprintf(w, "%-26s %d\n", "doubled", len(r.Doubled))
	fmt.Fprintf(w, "%-26s %d\n", "phantom", len(r.Phantom))
	fmt.Fprintf(w, "%-26s %d (of %d complete walks)\n", "walk anomalies", len(r.WalkAnomalies), r.Walks)
	fmt.Fprintf(w, "%-26s %d\n", "get 404 after ack", len(r.GetAfterAck))
	avail := 0.0
	if r.Requests > 0 {
		avail = 100 * float64(r.Answered) / float64(r.Requests)
	}
	fmt.Fprintf(w, "%-26s %.1f%% (%d of %d requests answered 2xx/4xx)\n", "availability", avail, r.Answered, r.Requests)
	for _, l := range []struct {
		name string
		list []string
	}{{"lost", r.Lost}, {"doubled", r.Doubled}, {"phantom", r.Phantom}, {"walk anomaly", r.WalkAnomalies}, {"get after ack", r.GetAfterAck}, {"short", r.Short}} {
		for i, s := range l.list {
			if i == 10 {
				fmt.Fprintf(w, "%s: … and %d more\n", l.name, len(l.list)-i)
				break
			}
			fmt.Fprintf(w, "%s: %s\n", l.name, s)
		}
	}
	if r.OK() {
		fmt.Fprintln(w, "result: PASS")
	} else {
		fmt.Fprintf(w, "result: FAIL (%d anomalies)\n", r.Anomalies())
	}
}
