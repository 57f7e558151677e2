package conform

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/petstore/petstore/internal/check"
	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/schemagen"
)

// Key equivalence over every member: two creates are the same request when
// they describe the same animal, NewPet after its defaults are applied. A
// keyed create with every member the schema has is sent; then, with its key,
// the same request with the defaults left out (and, in replays, spelt out)
// must replay the first answer, and the request with any one member changed
// alone must be refused 422 idempotency_key_reused: a fingerprint that
// leaves a member out, or reads one loosely, lets the wrong request replay.

// keyEquivalence sends those requests; the model judges every answer too.
func (r *run) keyEquivalence(ctx context.Context) error {
	const check = "idempotent_replay"
	if r.roles.Create == nil || !r.stated("key-reused") && !r.stated("equivalent-requests") {
		return nil
	}
	body, err := r.everyMember("conform-every")
	if err != nil {
		return nil // a schema nothing satisfies: the schema cases say so
	}
	key := r.Name("conform-equiv")
	x, _, ok, err := r.post(ctx, body, keyHeader(key), 1)
	if err != nil {
		return err
	}
	r.Expect(check, x, ok, "201 for a create with every member and an Idempotency-Key")
	if !ok {
		return nil
	}
	if r.stated("equivalent-requests") {
		if bare := r.defaultsLeftOut(body); len(bare) < len(body) {
			y, err := r.Send(ctx, r.reqs.CreateReq(spaced(bare), keyHeader(key)))
			if err != nil {
				return err
			}
			r.Expect(check, y, y.Status == http.StatusCreated, "201, the first answer replayed, for the retry with the defaults left out, the first having spelt them out")
		}
	}
	if !r.stated("key-reused") {
		return nil
	}
	for _, name := range sortedKeys(r.roles.Create.Body.Properties) {
		changed, how := r.changeMember(body, name)
		if changed == nil {
			continue
		}
		y, err := r.Send(ctx, r.reqs.CreateReq(mustJSON(changed), keyHeader(key)))
		if err != nil {
			return err
		}
		r.Expect(check, y, refusedWith(y, http.StatusUnprocessableEntity, "idempotency_key_reused"),
			fmt.Sprintf("422 idempotency_key_reused for the key with %s alone %s", name, how))
	}
	return nil
}

// everyMember is a valid create body with every member of the schema, at
// values drawn from the run's seed, the defaults spelt out, named prefix-…
// (unique to the run).
func (r *run) everyMember(prefix string) (map[string]any, error) {
	g := r.gen()
	g.Members = schemagen.AllMembers
	v, err := g.Value(r.roles.Create.Body)
	if err != nil {
		return nil, err
	}
	body, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the create's body is not an object")
	}
	for k, v := range schemagen.Defaults(r.roles.Create.Body) {
		body[k] = v // spelt out: the retry leaves them out
	}
	body[r.nameMember()] = r.Name(prefix)
	return body, nil
}

// defaultsLeftOut is body without the members whose value is their
// default.
func (r *run) defaultsLeftOut(body map[string]any) map[string]any {
	out := map[string]any{}
	d := r.defaults()
	for k, v := range body {
		if def, ok := d[k]; !ok || canonical(v) != def {
			out[k] = v
		}
	}
	return out
}

// changeMember is body with member name changed alone, to another valid
// value (or, for an optional member with no default and a value that is
// not empty, left out), and how; nil when the schema allows no other value.
func (r *run) changeMember(body map[string]any, name string) (map[string]any, string) {
	if name == r.nameMember() {
		return with(body, name, r.Name("conform-changed")), "changed"
	}
	ref := r.roles.Create.Body.Properties[name]
	if ref == nil || ref.Value == nil {
		return nil, ""
	}
	was := canonical(body[name])
	_, hasDefault := r.defaults()[name]
	candidates := r.valid(ref.Value)
	for range 8 { // random values after the bounds, for a schema whose bounds are all one value
		if v, err := r.gen().Value(ref.Value); err == nil {
			candidates = append(candidates, cases.JSONCase("drawn", v))
		}
	}
	for _, v := range candidates {
		c := canonical(v.JSON)
		if c != was {
			return with(body, name, v.JSON), "changed to " + check.CutText(c)
		}
	}
	if !slices.Contains(r.roles.Create.Body.Required, name) && !hasDefault && !isEmpty(was) {
		return with(body, name, absent), "left out"
	}
	return nil, ""
}

// writeSpaced writes v, a JSON value, in a legal but uncommon form, as
// spaced writes a body: white space around every token, an object's members
// in reverse order, every character of every string escaped, at every
// depth.
func writeSpaced(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case string:
		b.WriteString(escaped(v))
	case []any:
		b.WriteString("[ ")
		for i, e := range v {
			if i > 0 {
				b.WriteString(" ,\n ")
			}
			writeSpaced(b, e)
		}
		b.WriteString(" ]")
	case map[string]any:
		keys := sortedKeys(v)
		slices.Reverse(keys)
		b.WriteString("{ ")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(" ,\t")
			}
			b.WriteString(escaped(k) + " :\r\n")
			writeSpaced(b, v[k])
		}
		b.WriteString(" }")
	default:
		b.Write(mustJSON(v))
	}
}
