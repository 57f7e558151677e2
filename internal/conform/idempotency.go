package conform

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/petstore/petstore/gen"
)

// idempotentReplay creates a pet with an Idempotency-Key, sends the same
// create again in another form (members reordered, the default status spelt
// out), then the key with another pet. The retry must be the first answer
// replayed (201, the same body and Location, Idempotent-Replayed: true) with
// no second pet stored; the other pet must be refused 422.
func (r *run) idempotentReplay(ctx context.Context) error {
	const check = "idempotent_replay"
	key, name := r.name("conform-idem"), r.name("conform-once")
	var res *gen.CreatePetResponse
	x, err := r.typed(ctx, func(ctx context.Context) (err error) {
		res, err = r.client.CreatePetWithResponse(ctx, &gen.CreatePetParams{IdempotencyKey: &key}, gen.NewPet{Name: name, CategoryId: 11})
		return err
	})
	if err != nil || x == nil {
		return err
	}
	if res == nil || res.JSON201 == nil {
		r.expect(check, x, false, "201 for a create with an Idempotency-Key")
		return nil
	}
	pet := *res.JSON201
	header := http.Header{"Content-Type": {"application/json"}, "Idempotency-Key": {key}}
	y, err := r.send(ctx, request{method: http.MethodPost, target: "/pets", header: header,
		body: fmt.Appendf(nil, `{"status":"available","categoryId":11,"name":%q}`, name)})
	if err != nil {
		return err
	}
	r.expect(check, y, y.status == http.StatusCreated && sameJSON(y.body, x.body) &&
		y.header.Get("Location") == x.header.Get("Location") && y.header.Get("Idempotent-Replayed") == "true",
		fmt.Sprintf("the first answer replayed: 201, body %s, Location %s, Idempotent-Replayed: true", x.body, x.header.Get("Location")))

	// Nothing after the pet bears its name: the retry stored nothing.
	after, limit := pet.Id, gen.Limit(100)
	var list *gen.ListPetsResponse
	z, err := r.typed(ctx, func(ctx context.Context) (err error) {
		list, err = r.client.ListPetsWithResponse(ctx, &gen.ListPetsParams{After: &after, Limit: &limit})
		return err
	})
	if err != nil || z == nil {
		return err
	}
	again := 0
	if list != nil && list.JSON200 != nil {
		for _, p := range *list.JSON200 {
			if p.Name == name {
				again++
			}
		}
	}
	r.expect(check, z, list != nil && list.JSON200 != nil && again == 0, fmt.Sprintf("no pet named %q after id %d: the retry stores nothing", name, pet.Id))

	w, err := r.send(ctx, request{method: http.MethodPost, target: "/pets", header: header,
		body: fmt.Appendf(nil, `{"name":%q,"categoryId":11}`, name+"-other")})
	if err != nil {
		return err
	}
	var e gen.Error
	r.expect(check, w, w.status == http.StatusUnprocessableEntity && json.Unmarshal(w.body, &e) == nil && e.Code == gen.ErrorCodeIdempotencyKeyReused,
		"422 idempotency_key_reused for the same key with another pet")
	return nil
}
