package conform

import (
	"fmt"
	"slices"

	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/conform/report"
	"github.com/petstore/petstore/internal/conform/wire"
)

// Incomplete notes a gap of the run: it cannot pass (cases.T).
func (r *run) Incomplete(check, what, reason string) {
	if check != "" && !r.enabled[check] {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, g := range r.gaps {
		if g.What == what && g.Check == check {
			return
		}
	}
	r.gaps = append(r.gaps, Gap{Check: check, What: what, Reason: reason})
}

// gapsOf returns the gaps of the run, the budget's first when it ran out.
func (r *run) gapsOf(sent wire.Stats) []Gap {
	out := []Gap{} // [] in -json, never null
	if requests := sent.Sent; sent.Truncated {
		out = append(out, Gap{What: "budget", Reason: fmt.Sprintf("the request budget (-max-requests %d) ran out after %d %s, the target answering: the cases after it were not sent, and every check they belong to is unjudged in part", r.cfg.MaxRequests, requests, report.Plural(requests, "request", "requests"))})
	}
	if sent.Silent != "" {
		out = append(out, Gap{What: "the rest of the run", Reason: fmt.Sprintf("the target stopped answering: %s; the kit sent no more after %d %s, and every check the cases not sent belong to is unjudged in part", sent.Silent, sent.Sent, report.Plural(sent.Sent, "request", "requests"))})
	}
	return append(out, r.gaps...)
}

// unjudged fails closed: a check the run was asked for (by -checks, or by
// default) that judged no case leaves the run incomplete, unless the run
// skipped it for a reason it states (the checks across keys without
// -key2, deprecation on a spec that deprecates nothing) and it was not
// named by -checks: a check named and not run was asked for and not
// judged. It returns the skips that stand and a gap for each check asked
// for and not judged; the caller holds mu.
func (r *run) unjudged() ([]Skip, []Gap) {
	judged := map[string]bool{}
	for k, res := range r.results {
		judged[k[0]] = judged[k[0]] || res.Cases > 0
	}
	skipped := slices.Clone(r.skipped)
	var gaps []Gap
	for _, c := range Checks {
		if !r.enabled[c.Name] || judged[c.Name] {
			continue
		}
		named := slices.Contains(r.cfg.Checks, c.Name)
		i := slices.IndexFunc(skipped, func(s Skip) bool { return s.What == c.Name })
		switch {
		case i >= 0 && !named:
			continue // skipped for its reason, and not asked for by name
		case i >= 0:
			gaps = append(gaps, Gap{Check: c.Name, What: "no case judged", Reason: "named by -checks, but the run could not judge it: it " + skipped[i].Reason})
			skipped = slices.Delete(skipped, i, i+1)
		case r.wire.Stats().Truncated || r.wire.Stats().Silent != "":
			gaps = append(gaps, Gap{Check: c.Name, What: "no case judged", Reason: r.cutShort() + " before any of its cases was judged"})
		default:
			gaps = append(gaps, Gap{Check: c.Name, What: "no case judged", Reason: "asked for, but none of the requests the run sent was one this check judges: it has not passed"})
		}
	}
	return skipped, gaps
}

// noteNothingToJudge skips, with its reason, a check the spec being
// checked gives nothing to judge: deprecation, when it deprecates no
// operation.
func (r *run) noteNothingToJudge() {
	if !slices.ContainsFunc(r.ops, func(op *cases.Operation) bool { return op.Op.Deprecated }) {
		r.Skip("deprecation", "the spec marks no operation deprecated: there is nothing to judge")
	}
}

// cutShort says why the run sent no more: its budget ran out, or the
// target stopped answering.
func (r *run) cutShort() string {
	if r.wire.Stats().Silent != "" {
		return "the target stopped answering"
	}
	return "the request budget ran out"
}
