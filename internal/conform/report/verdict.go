package report

import (
	"fmt"
	"strings"
)

// The verdicts of a run. A run passes only when it judged everything it
// set out to judge and nothing failed; a run that could not judge part of
// it (its budget spent, a walk cut short, a time promise or a sentence not
// reached, its first create refused) is incomplete, never a pass: it says
// what it could not judge and why. A failure outweighs both.
const (
	Pass       = "pass"
	Fail       = "fail"
	Incomplete = "incomplete"
)

// Gap is something a run should have judged and could not: what, why, and
// the check it leaves unjudged ("" when it is no one check's).
type Gap struct {
	Check  string `json:"check,omitempty"`
	What   string `json:"what"`
	Reason string `json:"reason"`
}

// Promise is a promise over time the run exercised: how long the contract
// states, how long the run reached (0 when it could not exercise it at
// all), and what it did.
type Promise struct {
	Name    string  `json:"name"`
	Stated  float64 `json:"statedSeconds"`
	Reached float64 `json:"reachedSeconds"`
	How     string  `json:"how"`
}

// verdict is the verdict of a report: fail, incomplete or pass.
func (r *Report) verdictOf() string {
	switch {
	case len(r.Failures) > 0:
		return Fail
	case len(r.Incomplete) > 0 || r.Truncated:
		return Incomplete
	}
	return Pass
}

// hasGap reports whether a gap of the report leaves check unjudged in part:
// its own, or one of no check (the budget, a sentence).
func (r *Report) hasGap(check string) bool {
	for _, g := range r.Incomplete {
		if g.Check == check {
			return true
		}
	}
	return false
}

// incompleteText is the text report's paragraph on what the run could not
// judge.
func (r *Report) incompleteText(b *strings.Builder) {
	for i, g := range r.Incomplete {
		if i == 0 {
			b.WriteString("\nIncomplete: the kit could not judge all it should:\n")
		}
		if g.Check != "" {
			fmt.Fprintf(b, "  %s (%s): %s\n", g.What, g.Check, g.Reason)
		} else {
			fmt.Fprintf(b, "  %s: %s\n", g.What, g.Reason)
		}
	}
}

// promisesText is the text report's paragraph on the promises over time.
func (r *Report) promisesText(b *strings.Builder) {
	for i, p := range r.Promises {
		if i == 0 {
			b.WriteString("\nPromises over time:\n")
		}
		switch {
		case p.Reached == 0:
			fmt.Fprintf(b, "  %s: not reached (%s)\n", p.Name, p.How)
		case p.Reached < p.Stated:
			fmt.Fprintf(b, "  %s: %s over %s of the %s the contract states; the rest is beyond this run\n", p.Name, p.How, seconds(p.Reached), seconds(p.Stated))
		default:
			fmt.Fprintf(b, "  %s: %s over %s\n", p.Name, p.How, seconds(p.Reached))
		}
	}
}

// seconds writes a span for a person: 1.52 s, 24 h.
func seconds(s float64) string {
	switch {
	case s >= 3600 && s == float64(int(s/3600))*3600:
		return fmt.Sprintf("%d h", int(s/3600))
	case s >= 60 && s == float64(int(s/60))*60:
		return fmt.Sprintf("%d min", int(s/60))
	case s >= 10 || s == float64(int(s)):
		return fmt.Sprintf("%.0f s", s)
	}
	return fmt.Sprintf("%.2f s", s)
}
