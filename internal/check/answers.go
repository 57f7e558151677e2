package check

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/petstore/petstore/internal/history"
)

// expected reports whether an answer (status and Error code) is one the
// contract documents for what the workload sent with op: valid requests
// with a valid key, each create's retries with the same key and body, no
// rate limit. No answer at all (status 0) is not an answer, and is
// expected. A walk's 4xx on a cursor is a walk anomaly (walkPages), not
// judged here.
func expected(op *history.Op, status int, code string) bool {
	switch {
	case status == 0:
		return true
	case status == 503:
		// outcome_unknown: the create may have been stored (createPet only).
		return code == "unavailable" || code == "outcome_unknown" && op.Kind == history.Create
	}
	switch op.Kind {
	case history.Create:
		// 409: a retry while an earlier attempt with the key is still
		// being processed; the first attempt has no earlier one.
		return status == 201 || status == 409 && code == "idempotency_key_in_flight" && op.Key != "" && op.Attempt > 1
	case history.Get:
		return status == 200 || status == 404 && code == "not_found"
	case history.Walk:
		return status == 200
	}
	return false
}

// auditAnswers reports every answer the contract does not document for
// the workload's requests, and every answer that broke openapi.yaml.
func (a *audit) auditAnswers() {
	for i := range a.ops {
		op := &a.ops[i]
		var what string
		switch op.Kind {
		case history.Create:
			what = fmt.Sprintf("keyless create %q", nameOf(op))
			if op.Key != "" {
				what = fmt.Sprintf("key %s attempt %d", op.Key, op.Attempt)
			}
			what += " to " + op.Replica
		case history.Get:
			what = fmt.Sprintf("get %d from %s", op.ID, op.Replica)
		case history.Walk:
			what = walkName(op)
			for _, pg := range op.Pages {
				if pg.Status >= 400 && pg.Status < 500 && pg.After > 0 {
					continue // a refused cursor: a walk anomaly
				}
				if !expected(op, pg.Status, pg.Code) {
					a.r.Unexpected = append(a.r.Unexpected, fmt.Sprintf("%s: page after=%d from %s: %d %s %s", what, pg.After, pg.Replica, pg.Status, pg.Code, pg.Error))
				}
			}
		default:
			continue
		}
		what += " at " + ms(op.Invoke)
		if op.Kind != history.Walk && !expected(op, op.Status, op.Code) {
			a.r.Unexpected = append(a.r.Unexpected, fmt.Sprintf("%s: %d %s %s", what, op.Status, op.Code, op.Error))
		}
		for _, v := range op.Violations {
			a.r.Unexpected = append(a.r.Unexpected, fmt.Sprintf("%s: breaks openapi.yaml: %s", what, v))
		}
	}
}

func nameOf(op *history.Op) string {
	if op.Body == nil {
		return ""
	}
	return op.Body.Name
}

// Print writes the result table, and the first few anomalies of each kind.
func (r *Result) Print(w io.Writer) {
	fmt.Fprintf(w, "%-18s %8s %8s %14s %8s\n", "operations", "ok", "failed", "indeterminate", "total")
	for _, row := range Rows {
		m := r.Ops[row]
		fmt.Fprintf(w, "%-18s %8d %8d %14d %8d\n", row, m[history.OK], m[history.Failed], m[history.Indeterminate],
			m[history.OK]+m[history.Failed]+m[history.Indeterminate])
	}
	fmt.Fprintln(w, "answers, by request (a walk's are its pages'):")
	for _, row := range Rows {
		m := r.Answers[row]
		keys := slices.Sorted(maps.Keys(m))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s: %d", k, m[k])
		}
		fmt.Fprintf(w, "  %-16s %s\n", row, strings.Join(parts, ", "))
	}
	kinds := slices.Sorted(maps.Keys(r.Faults))
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, r.Faults[k])
	}
	fmt.Fprintf(w, "%-26s %d, %d kinds (%s)\n", "faults", r.FaultsTotal(), len(kinds), strings.Join(parts, ", "))
	fmt.Fprintf(w, "%-26s %d\n", "pets acknowledged", r.Acked)
	fmt.Fprintf(w, "%-26s %d\n", "pets stored", r.Stored)
	fmt.Fprintf(w, "%-26s %d (%d of them stored; not blamed)\n", "keyless, outcome unknown", r.KeylessUnknown, r.KeylessUnknownStored)
	fmt.Fprintf(w, "%-26s %d (%d complete walks)\n", "pets returned by reads", r.Reads, r.Walks)
	for _, k := range Kinds {
		fmt.Fprintf(w, "%-26s %d\n", k, len(r.Of(k)))
	}
	avail := 0.0
	if r.Requests > 0 {
		avail = 100 * float64(r.Answered) / float64(r.Requests)
	}
	fmt.Fprintf(w, "%-26s %.1f%% (%d of %d requests answered 2xx/4xx)\n", "availability", avail, r.Answered, r.Requests)
	for _, k := range append(slices.Clone(Kinds), "short") {
		list := r.Short
		if k != "short" {
			list = r.Of(k)
		}
		for i, s := range list {
			if i == 10 {
				fmt.Fprintf(w, "%s: … and %d more\n", k, len(list)-i)
				break
			}
			fmt.Fprintf(w, "%s: %s\n", k, s)
		}
	}
	if r.OK() {
		fmt.Fprintln(w, "result: PASS")
	} else {
		fmt.Fprintf(w, "result: FAIL (%d anomalies)\n", r.Anomalies())
	}
}
