package cases

import (
	"context"
	"strings"

	"github.com/petstore/petstore/internal/conform/wire"
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

// keyed reports whether req is to op and carries no Idempotency-Key of
// its own: a form the key variants apply to.
func keyable(req wire.Request, op *Operation) bool {
	path, _, _ := strings.Cut(req.Target, "?")
	return op != nil && req.Method == op.Method && path == op.Path && len(req.Header.Values("Idempotency-Key")) == 0
}

// FormCases sends every illegal form (IllegalForms) again in each
// variant that applies.
func FormCases(ctx context.Context, t T) error {
	if !t.Stated("forms-before-keys") {
		return nil
	}
	reqs := t.Requests()
	create := reqs.Roles.Create
	var kept, fresh string
	var keptBody []byte
	var keptPet int64
	if create != nil && t.Stated("replay") {
		kept, fresh = t.Name("conform-forms-kept"), t.Name("conform-forms-new")
		keptBody = MustJSON(reqs.NewPet("conform-forms", nil))
		x, id, ok, err := t.Post(ctx, keptBody, KeyHeader(kept), 1)
		if err != nil {
			return err
		}
		t.Expect("idempotent_replay", x, ok, "201 for a create with an Idempotency-Key")
		if !ok {
			create = nil
		}
		keptPet = id
	}
	for _, form := range IllegalForms(t) {
		for _, v := range formVariants {
			if v.key != 0 && !keyable(form.Req, create) {
				continue
			}
			k := form
			k.Label += ", " + v.label
			if v.origin {
				k.Req = WithHeader(k.Req, "Origin", CORSOrigin)
			}
			switch v.key {
			case 1:
				k.Req = WithHeader(k.Req, "Idempotency-Key", fresh)
			case 2:
				k.Req = WithHeader(k.Req, "Idempotency-Key", kept)
			}
			if err := Send(ctx, t, []Case{k}); err != nil {
				return err
			}
		}
	}
	if create == nil {
		return nil
	}
	// The kept outcome, untouched; the new key, never kept.
	return Send(ctx, t, []Case{
		{Label: "the kept key's request again, after illegal retries", Check: "idempotent_replay", Req: reqs.CreateReq(keptBody, KeyHeader(kept)), Want: ReplayOf(keptPet)},
		{Label: "a create with the key the illegal forms carried, a new pet: a refused request keeps no outcome", Check: "idempotent_replay", Req: reqs.CreateReq(MustJSON(reqs.NewPet("conform-forms", nil)), KeyHeader(fresh)), Want: NewPetOf(keptPet)},
	})
}
