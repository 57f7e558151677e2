package check

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/petstore/petstore/internal/history"
)

// How the model compares a pet as a create sent it (defaults applied) with
// the pet an answer shows (stored_as_sent): every member sent comes back
// equal, as canonical JSON (members of objects in any order, arrays in
// theirs, integers exact); a member of the request's schema that was not
// sent and has no default does not come back; a member the request's
// schema does not have (the id the service assigns, a member of a rival's
// own: the contract's response schemas are open) is the response schema's
// business alone. An array or object member left out and the same member
// sent empty are two pets: "stored and answered as it was sent".

// memberRules say which members a create may send.
type memberRules struct {
	request map[string]bool // nil: every member is one
}

// alters says how answer shows the pet otherwise than sent, member by
// member; "" when it does not.
func (mr memberRules) alters(sent, answer history.Members) string {
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(sent)) {
		v := sent[k]
		got, ok := answer[k]
		switch {
		case ok && got == v:
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s (%s) dropped", k, CutText(v)))
		default:
			diffs = append(diffs, fmt.Sprintf("%s %s, not %s", k, CutText(got), CutText(v)))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(answer)) {
		got := answer[k]
		if _, ok := sent[k]; ok || mr.request != nil && !mr.request[k] {
			continue
		}
		diffs = append(diffs, fmt.Sprintf("%s %s added", k, CutText(got)))
	}
	return strings.Join(diffs, "; ")
}

// CutText shortens a member's JSON for a message.
func CutText(v string) string {
	if r := []rune(v); len(r) > 80 {
		return string(r[:80]) + "…"
	}
	return v
}
