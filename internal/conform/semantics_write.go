package conform

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/conform/wire"
)

// The PUT and PATCH of the collection's item, in method_semantics: a pet
// made for each, the write sent (a PUT: a whole body of the operation's
// schema, its required members, under a new name; a PATCH: one member
// changed), the pet read, the walk of the listing, the PUT repeated
// (idempotent) and the pet read again. check.MethodSemantics judges it:
// reads show what was sent, a PATCH leaves the rest as it was, the PUT
// repeated is answered 2xx.

// writeMedia is the media type and schema of op's request body for the
// write method_semantics sends it: for a PATCH a JSON merge patch (RFC
// 7396) where the spec takes one, else JSON; "" when it takes neither.
func writeMedia(op *cases.Operation) (string, *openapi3.Schema) {
	rb := op.Op.RequestBody
	if rb == nil || rb.Value == nil {
		return "", nil
	}
	types := []string{"application/json"}
	if op.Method == http.MethodPatch {
		types = []string{"application/merge-patch+json", "application/json"}
	}
	for _, t := range types {
		if mt := rb.Value.Content.Get(t); mt != nil && mt.Schema != nil && mt.Schema.Value != nil {
			return t, mt.Schema.Value
		}
	}
	return "", nil
}

// isItemWrite reports whether op is a PUT or PATCH of the get's path with
// a body method_semantics can send.
func (r *run) isItemWrite(op *cases.Operation) bool {
	if op.Method != http.MethodPut && op.Method != http.MethodPatch || op.Path != r.roles.Get.Path {
		return false
	}
	t, _ := writeMedia(op)
	return t != ""
}

// writeBody is the body method_semantics sends op: a PUT's required
// members under a new name, a PATCH's one member changed.
func (r *run) writeBody(op *cases.Operation, s *openapi3.Schema) map[string]any {
	if op.Method == http.MethodPut {
		if body := r.reqs.BaseBodyNamed(s, r.reqs.Names.Name("conform-put")); len(body) > 0 {
			return body
		}
	}
	name := r.reqs.Names.Name("conform-patch")
	var other map[string]any
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		ref := s.Properties[k]
		if ref == nil || ref.Value == nil || ref.Value.ReadOnly || r.roles.Create.Created != nil && r.roles.Create.Created.Properties[k] == nil {
			continue // not a member of the pet the reads show
		}
		ps := cases.Flat(ref.Value)
		if cases.IsType(ps, "string") && len(ps.Enum) == 0 && cases.StringOK(ps, name) {
			return map[string]any{k: name}
		}
		if vs := r.reqs.Values.Valid(ps); other == nil && len(vs) > 0 && vs[len(vs)-1].JSON != nil {
			other = map[string]any{k: vs[len(vs)-1].JSON}
		}
	}
	return other
}

// writeFlow writes pet id by op: read after, the walk, a PUT repeated and
// read again.
func (s *semantics) writeFlow(ctx context.Context, op *cases.Operation, id, from int64) error {
	ct, schema := writeMedia(op)
	body := s.r.writeBody(op, schema)
	if body == nil {
		return nil // nothing to send: the phase's judge names it unjudged
	}
	values := map[string]string{}
	for _, p := range op.InPath {
		values[p.Name] = strconv.FormatInt(id, 10)
	}
	write := wire.Request{Method: op.Method, Target: op.Target(values, ""), Header: http.Header{"Content-Type": {ct}}, Body: cases.MustJSON(body)}
	get := wire.Request{Method: http.MethodGet, Target: s.r.reqs.GetTarget(id)}
	for _, req := range []wire.Request{write, get} {
		if _, err := s.send(ctx, req); err != nil {
			return err
		}
	}
	if err := s.walk(ctx, from); err != nil {
		return err
	}
	if op.Method != http.MethodPut {
		return nil
	}
	for _, req := range []wire.Request{write, get} {
		if _, err := s.send(ctx, req); err != nil {
			return err
		}
	}
	return nil
}

// writeSent are the members of a PUT's or PATCH's body, each in the form
// the create's schema gives it, no default added: what the reads show.
func (r *run) writeSent(x *judge.Exchange) map[string]string {
	m, ok := judge.DecodeObject(x.ReqBody)
	if !ok {
		return nil
	}
	all, _ := r.SentMembers(x.ReqBody)
	out := map[string]string{}
	for k := range m {
		if v, ok := all[k]; ok {
			out[k] = v
		}
	}
	return out
}
