package conform

import (
	"fmt"

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
	return append(out, r.gaps...)
}
