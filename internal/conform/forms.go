package conform

import (
	"context"
	"strings"
)

// Every form on every path that reads it: each illegal form the kit knows
// (the negative cases of the sentences the spec states, and of each
// schema, parameter and header) is sent again with an Origin, and, on the
// operation that takes an Idempotency-Key, with a new key and as a retry
// of a kept one, with an Origin and without. Each must be refused as
// before: a form is refused whatever else the request carries
// (forms-before-keys), the refusal keeps no outcome (a new create with the
// same new key creates, after them all), and a kept outcome is neither
// replayed to an illegal retry nor disturbed by one (its valid retry,
// after them all, replays it).

// A formVariant is what a form is sent again with.
type formVariant struct {
	label  string
	origin bool
	key    int // 0 none, 1 a new key (never kept), 2 the kept key
}

var formVariants = []formVariant{
	{"with Origin", true, 0},
	{"with a new Idempotency-Key", false, 1},
	{"with a new Idempotency-Key and Origin", true, 1},
	{"as a retry of a kept Idempotency-Key", false, 2},
	{"as a retry of a kept Idempotency-Key, with Origin", true, 2},
}

// illegalForms are the negative cases of the stated sentences sent before
// the last phase, and of each operation's schemas: each a request the
// contract refuses for its form.
func (r *run) illegalForms() []kase {
	var forms []kase
	keep := func(ks []kase) {
		for _, k := range ks {
			if k.Check == "negative_data_rejection" && k.Req.Raw == nil {
				forms = append(forms, k)
			}
		}
	}
	for _, s := range sentences {
		if s.cases != nil && !s.last && s.skip == "" && r.stated(s.name) {
			keep(s.cases(r))
		}
	}
	for _, op := range r.ops {
		keep(r.schemaNegatives(op))
	}
	return forms
}

// keyed reports whether req is to op and carries no Idempotency-Key of
// its own: a form the key variants apply to.
func keyable(req request, op *operation) bool {
	path, _, _ := strings.Cut(req.Target, "?")
	return op != nil && req.Method == op.Method && path == op.Path && len(req.Header.Values("Idempotency-Key")) == 0
}

// formCases sends every illegal form again in each variant that applies.
func (r *run) formCases(ctx context.Context) error {
	if !r.stated("forms-before-keys") {
		return nil
	}
	create := r.roles.Create
	var kept, fresh string
	var keptBody []byte
	var keptPet int64
	if create != nil && r.stated("replay") {
		kept, fresh = r.Name("conform-forms-kept"), r.Name("conform-forms-new")
		keptBody = mustJSON(r.reqs.NewPet("conform-forms", nil))
		x, id, ok, err := r.post(ctx, keptBody, keyHeader(kept), 1)
		if err != nil {
			return err
		}
		r.Expect("idempotent_replay", x, ok, "201 for a create with an Idempotency-Key")
		if !ok {
			create = nil
		}
		keptPet = id
	}
	for _, form := range r.illegalForms() {
		for _, v := range formVariants {
			if v.key != 0 && !keyable(form.Req, create) {
				continue
			}
			k := form
			k.Label += ", " + v.label
			if v.origin {
				k.Req = withHeader(k.Req, "Origin", corsOrigin)
			}
			switch v.key {
			case 1:
				k.Req = withHeader(k.Req, "Idempotency-Key", fresh)
			case 2:
				k.Req = withHeader(k.Req, "Idempotency-Key", kept)
			}
			if err := r.sendCases(ctx, []kase{k}); err != nil {
				return err
			}
		}
	}
	if create == nil {
		return nil
	}
	// The kept outcome, untouched; the new key, never kept.
	return r.sendCases(ctx, []kase{
		{Label: "the kept key's request again, after illegal retries", Check: "idempotent_replay", Req: r.reqs.CreateReq(keptBody, keyHeader(kept)), Want: replayOf(keptPet)},
		{Label: "a create with the key the illegal forms carried, a new pet: a refused request keeps no outcome", Check: "idempotent_replay", Req: r.reqs.CreateReq(mustJSON(r.reqs.NewPet("conform-forms", nil)), keyHeader(fresh)), Want: newPetOf(keptPet)},
	})
}
