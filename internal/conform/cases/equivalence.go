package cases

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/check"
	"github.com/petstore/petstore/internal/schemagen"
	"github.com/petstore/petstore/internal/value"
)

// Key equivalence over every member: two creates are the same request when
// they describe the same animal, NewPet after its defaults are applied. A
// keyed create with every member the schema has is sent; then, with its key,
// the same request with the defaults left out (and, in replays, spelt out)
// must replay the first answer, and the request with any one member changed
// alone must be refused 422 idempotency_key_reused: a fingerprint that
// leaves a member out, or reads one loosely, lets the wrong request replay.

// KeyEquivalence sends those requests; the model judges every answer too.
func KeyEquivalence(ctx context.Context, t T) error {
	const check = "idempotent_replay"
	reqs := t.Requests()
	if reqs.Roles.Create == nil || !t.Stated("key-reused") && !t.Stated("equivalent-requests") {
		return nil
	}
	body, err := EveryMember(t, "conform-every")
	if err != nil {
		return nil // a schema nothing satisfies: the schema cases say so
	}
	key := t.Name("conform-equiv")
	x, _, ok, err := t.Post(ctx, MustJSON(body), KeyHeader(key), 1)
	if err != nil {
		return err
	}
	t.Expect(check, x, ok, "201 for a create with every member and an Idempotency-Key")
	if !ok {
		return nil
	}
	if t.Stated("equivalent-requests") {
		if bare := defaultsLeftOut(t, body); len(bare) < len(body) {
			y, err := t.Send(ctx, reqs.CreateReq(Spaced(bare), KeyHeader(key)))
			if err != nil {
				return err
			}
			t.Expect(check, y, y.Status == http.StatusCreated, "201, the first answer replayed, for the retry with the defaults left out, the first having spelt them out")
		}
	}
	if !t.Stated("key-reused") {
		return nil
	}
	for _, name := range sortedKeys(reqs.Roles.Create.Body.Properties) {
		changed, how := ChangeMember(t, body, name)
		if changed == nil {
			continue
		}
		y, err := t.Send(ctx, reqs.CreateReq(MustJSON(changed), KeyHeader(key)))
		if err != nil {
			return err
		}
		t.Expect(check, y, RefusedWith(y, http.StatusUnprocessableEntity, "idempotency_key_reused"),
			fmt.Sprintf("422 idempotency_key_reused for the key with %s alone %s", name, how))
	}
	return nil
}

// EveryMember is a valid create body with every member of the schema, at
// values drawn from the run's seed, the defaults spelt out, named prefix-…
// (unique to the run).
func EveryMember(t T, prefix string) (map[string]any, error) {
	create := t.Requests().Roles.Create.Body
	g := t.Gen()
	g.Members = schemagen.AllMembers
	v, err := g.Value(create)
	if err != nil {
		return nil, err
	}
	body, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the create's body is not an object")
	}
	for k, v := range value.Defaults(create) {
		body[k] = v // spelt out: the retry leaves them out
	}
	body[t.NameMember()] = t.Name(prefix)
	return body, nil
}

// defaultsLeftOut is body without the members whose value is their
// default (by the contract's value rules).
func defaultsLeftOut(t T, body map[string]any) map[string]any {
	create := t.Requests().Roles.Create.Body
	out := map[string]any{}
	d := value.Defaults(create)
	for k, v := range body {
		if def, ok := d[k]; !ok || !value.Equal(v, def, memberSchema(create, k)) {
			out[k] = v
		}
	}
	return out
}

// memberSchema is the schema of object schema s's member name, or nil.
func memberSchema(s *openapi3.Schema, name string) *openapi3.Schema {
	if p := s.Properties[name]; p != nil {
		return p.Value
	}
	return nil
}

// ChangeMember is body with member name changed alone, to another valid
// value (or, for an optional member with no default and a value that is
// not empty, left out), and how; nil when the schema allows no other value.
func ChangeMember(t T, body map[string]any, name string) (map[string]any, string) {
	if name == t.NameMember() {
		return With(body, name, t.Name("conform-changed")), "changed"
	}
	create := t.Requests().Roles.Create.Body
	ref := create.Properties[name]
	if ref == nil || ref.Value == nil {
		return nil, ""
	}
	was := value.Text(body[name])
	_, hasDefault := t.Defaults()[name]
	candidates := t.Valid(ref.Value)
	for range 8 { // random values after the bounds, for a schema whose bounds are all one value
		if v, err := t.Gen().Value(ref.Value); err == nil {
			candidates = append(candidates, JSONCase("drawn", v))
		}
	}
	for _, v := range candidates {
		if !value.Equal(v.JSON, body[name], ref.Value) { // another value, not another spelling
			return With(body, name, v.JSON), "changed to " + check.CutText(value.Text(v.JSON))
		}
	}
	if !slices.Contains(create.Required, name) && !hasDefault && !isEmpty(was) {
		return With(body, name, Absent), "left out"
	}
	return nil, ""
}

// isEmpty reports whether canonical JSON text is an empty array or object.
func isEmpty(v string) bool { return v == "[]" || v == "{}" }
