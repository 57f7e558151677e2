package conform

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/schemagen"
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
	request map[string]bool // nil: every member is one (the model's unit tests)
}

// memberRules of the create's body schema.
func (r *run) memberRules() memberRules {
	mr := memberRules{request: map[string]bool{}}
	if r.roles.create == nil {
		return mr
	}
	for name := range r.roles.create.body.Properties {
		mr.request[name] = true
	}
	return mr
}

// isEmpty reports whether canonical JSON text is an empty array or object.
func isEmpty(v string) bool { return v == "[]" || v == "{}" }

// alters says how answer shows the pet otherwise than sent, member by
// member; "" when it does not.
func (mr memberRules) alters(sent, answer map[string]string) string {
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(sent)) {
		v := sent[k]
		got, ok := answer[k]
		switch {
		case ok && got == v:
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s (%s) dropped", k, cutText(v)))
		default:
			diffs = append(diffs, fmt.Sprintf("%s %s, not %s", k, cutText(got), cutText(v)))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(answer)) {
		got := answer[k]
		if _, ok := sent[k]; ok || mr.request != nil && !mr.request[k] {
			continue
		}
		diffs = append(diffs, fmt.Sprintf("%s %s added", k, cutText(got)))
	}
	return strings.Join(diffs, "; ")
}

// cutText shortens a member's JSON for a message.
func cutText(v string) string {
	if r := []rune(v); len(r) > 80 {
		return string(r[:80]) + "…"
	}
	return v
}

// createSchema is the create's body schema, or nil.
func (r *run) createSchema() *openapi3.Schema {
	if r.roles.create == nil {
		return nil
	}
	return r.roles.create.body
}

// canonical is v, a decoded JSON value (numbers as json.Number), as
// canonical JSON text: RFC 8785, integers exact (schemagen.Canonical).
func canonical(v any) string {
	c, err := schemagen.Canonical(v)
	if err != nil {
		return string(mustJSON(v))
	}
	return string(c)
}

// sentMembers decodes a create's body, a JSON object, into its members as
// canonical JSON text, the defaults of the members it leaves out applied at
// every depth (schemagen.WithDefaults).
func (r *run) sentMembers(b []byte) (map[string]string, bool) {
	m, ok := decodeObject(b)
	if !ok {
		return nil, false
	}
	if s := r.createSchema(); s != nil {
		m, _ = schemagen.WithDefaults(m, s).(map[string]any)
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = canonical(v)
	}
	return out, true
}
