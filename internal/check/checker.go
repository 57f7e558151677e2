package check

import (
	"fmt"

	"github.com/petstore/petstore/internal/history"
)

// A Checker judges a history (Jepsen's way): the ops in, a Judgement out,
// valid, invalid or unknown. Checkers compose (Compose): each judges the
// promises it holds, and no two judge the same one. The checkers of the
// package: Kit (check.Model over a kit's history, Replay), Audit (a
// chaos run's history against the store's final state, Check).
type Checker interface {
	Check(ops []history.Op) Judgement
}

// Func is a function as a Checker.
type Func func(ops []history.Op) Judgement

// Check is f(ops).
func (f Func) Check(ops []history.Op) Judgement { return f(ops) }

// Compose is a Checker of every promise of cs: the anomalies of all, in
// order; invalid when one is, else unknown when one is (each Why, joined),
// else valid.
func Compose(cs ...Checker) Checker {
	return Func(func(ops []history.Op) Judgement {
		j := Judgement{Verdict: Valid}
		unknown := false
		for _, c := range cs {
			k := c.Check(ops)
			j.Anomalies = append(j.Anomalies, k.Anomalies...)
			j.Ops = append(j.Ops, k.Ops...)
			switch k.Verdict {
			case Invalid:
				j.Verdict = Invalid
			case Valid:
			default: // unknown, or a verdict the checker did not give
				unknown = true
				j.Why = joinWhy(j.Why, k.Why)
			}
		}
		if j.Verdict != Invalid && unknown {
			j.Verdict = Unknown
		}
		return j
	})
}

func joinWhy(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// Kit is the checker of a conformance kit's history: Replay.
func Kit() Checker { return Func(Replay) }

// Audit is the checker of a chaos run's history against state, the
// store's final state (Check): an anomaly of each line of the Result
// (Ops -1: the audit judges the run as a whole), unknown when the run fell
// short of opt (Result.Short).
func Audit(state []history.Pet, opt Options) Checker {
	return Func(func(ops []history.Op) Judgement {
		return AuditJudgement(Check(ops, state, opt))
	})
}

// AuditJudgement is r as a Judgement.
func AuditJudgement(r *Result) Judgement {
	j := Judgement{Verdict: Valid}
	for _, k := range Kinds {
		for _, line := range r.Of(k) {
			j.Anomalies = append(j.Anomalies, Anomaly{Kind: k, Check: auditCheck(k), Want: line})
			j.Ops = append(j.Ops, -1)
		}
	}
	switch {
	case len(j.Anomalies) > 0:
		j.Verdict = Invalid
	case len(r.Short) > 0:
		j.Verdict, j.Why = Unknown, fmt.Sprint(r.Short)
	}
	return j
}

// auditCheck is the check of the kit that a kind of anomaly the audit
// finds belongs to: the first its meaning names ("" for none).
func auditCheck(kind string) string {
	if cs := Meaning[kind].Checks; len(cs) > 0 {
		return cs[0]
	}
	return ""
}
