package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// The objects a response carries are open: a later minor version may add
// members to them, and a client must ignore those it does not know; request
// bodies are closed (docs/evolving-the-contract.md#open-responses-closed-requests).
// oasdiff does not look at additionalProperties, so the gate holds the rule
// itself (responseObjectRule).

// object is an object schema a response body reaches.
type object struct {
	closed bool     // additionalProperties: false
	shared bool     // a request body reaches it too: it keeps the request's rule
	props  []string // its members
}

// responseObjects lists the object schemas the response bodies of doc
// reach, by where they are: "components.schemas.Pet" for a named schema,
// else the operation, the status and the way in ("GET /pets 200 [] owner").
func responseObjects(doc *openapi3.T) map[string]object {
	objs, requests := map[string]object{}, map[string]object{}
	for _, path := range doc.Paths.InMatchingOrder() {
		for method, op := range doc.Paths.Value(path).Operations() {
			where := method + " " + path
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					walkObjects(mt.Schema, where+" request", requests)
				}
			}
			if op.Responses == nil {
				continue
			}
			for status, resp := range op.Responses.Map() {
				if resp.Value == nil {
					continue
				}
				for _, mt := range resp.Value.Content {
					walkObjects(mt.Schema, where+" "+status, objs)
				}
			}
		}
	}
	for key, o := range objs {
		_, o.shared = requests[key]
		objs[key] = o
	}
	return objs
}

// walkObjects adds the object schemas ref reaches to objs.
func walkObjects(ref *openapi3.SchemaRef, where string, objs map[string]object) {
	if ref == nil || ref.Value == nil {
		return
	}
	if ref.Ref != "" {
		where = strings.ReplaceAll(strings.TrimPrefix(ref.Ref, "#/"), "/", ".")
		if _, seen := objs[where]; seen {
			return
		}
	}
	s := ref.Value
	ap := s.AdditionalProperties
	if s.Type.Is("object") || len(s.Properties) > 0 || ap.Has != nil || ap.Schema != nil {
		objs[where] = object{closed: ap.Has != nil && !*ap.Has, props: slices.Sorted(maps.Keys(s.Properties))}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		walkObjects(s.Properties[name], where+" "+name, objs)
	}
	walkObjects(s.Items, where+" []", objs)
	walkObjects(ap.Schema, where+" *", objs)
	for kind, subs := range map[string]openapi3.SchemaRefs{"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf} {
		for i, sub := range subs {
			walkObjects(sub, fmt.Sprintf("%s %s[%d]", where, kind, i), objs)
		}
	}
}

// responseObjectRule judges the response objects of rev against base's:
// opening one is an additive change; closing one, or a new one closed, is
// refused in every version, unless a request body shares it (requests are
// closed); a member added to an object closed in both is breaking, since a
// client that validates responses against the release rejects it.
func responseObjectRule(base, rev *openapi3.T) (changes []Change, problems []string) {
	was, now := responseObjects(base), responseObjects(rev)
	for _, key := range slices.Sorted(maps.Keys(now)) {
		o := now[key]
		b, before := was[key]
		where, name := objectWhere(key)
		switch {
		case o.closed && before && b.closed:
			for _, p := range o.props {
				if !slices.Contains(b.props, p) {
					changes = append(changes, Change{Raise: Major, Where: where, Text: fmt.Sprintf("added the member `%s` to %s, a closed response object (`additionalProperties: false`): a client that validates responses against the release rejects it", p, name)})
				}
			}
		case o.closed && !o.shared:
			problems = append(problems, fmt.Sprintf("%s is a closed response object (`additionalProperties: false`): response objects stay open in every version, so that a minor version may add members (docs/evolving-the-contract.md#open-responses-closed-requests); remove it", name))
		case !o.closed && before && b.closed:
			changes = append(changes, Change{Raise: Minor, Where: where, Text: fmt.Sprintf("%s is open: it no longer has `additionalProperties: false`, so a later minor version may add members to it, which a client must ignore, and a client that validates responses must not reject (docs/evolving-the-contract.md#open-responses-closed-requests)", name)})
		}
	}
	return changes, problems
}

// objectWhere is where a change to the object at key is reported, and how
// the object is named: "components" and "the schema `Pet`", or the
// operation and "the object at `GET /pets 200 [] owner`".
func objectWhere(key string) (where, name string) {
	if s, ok := strings.CutPrefix(key, "components.schemas."); ok && !strings.Contains(s, " ") {
		return "components", "the schema `" + s + "`"
	}
	if strings.HasPrefix(key, "components.") {
		return "components", "the object at `" + key + "`"
	}
	f := strings.Fields(key)
	return f[0] + " " + f[1], "the object at `" + key + "`"
}
