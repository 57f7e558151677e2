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

// judgeMembers judges answer, a pet as an answer shows it, against sent,
// the pet as its create sent it (defaults applied): the members the create
// sent fail stored_as_sent, the defaults of those it left out (left)
// default_status; want and got begin the anomaly's sentences.
func (m *model) judgeMembers(kind string, sent history.Members, left []string, answer history.Members, want, got string) []Anomaly {
	var vs []Anomaly
	isLeft := func(k string) bool { return slices.Contains(left, k) }
	if d := m.rules.altersWhere(sent, answer, func(k string) bool { return !isLeft(k) }); d != "" {
		vs = append(vs, an(kind, "stored_as_sent", want+fingerprint(sent), got+d))
	}
	if d := m.rules.altersWhere(sent, answer, isLeft); d != "" {
		vs = append(vs, an(kind, "default_status", want+fingerprint(sent), got+d))
	}
	return vs
}

// alters says how answer shows the pet otherwise than sent, member by
// member; "" when it does not.
func (mr memberRules) alters(sent, answer history.Members) string {
	return mr.altersWhere(sent, answer, func(string) bool { return true })
}

// altersWhere is alters of the members for which of holds.
func (mr memberRules) altersWhere(sent, answer history.Members, of func(string) bool) string {
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(sent)) {
		if !of(k) {
			continue
		}
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
		if _, ok := sent[k]; ok || !of(k) || mr.request != nil && !mr.request[k] {
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
