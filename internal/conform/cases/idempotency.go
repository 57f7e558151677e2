package cases

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/conform/wire"
)

// The sequences that hold a target to createPet's promises on retries:
// each sends the requests and says what each answer must be; the model
// judges what the answers show (the first answer replayed, no second pet,
// a pet of its own for another key).

// Replays: a keyed create, then its retry in each equivalent form the spec
// states replays the first answer; the key with another pet is 422.
func Replays(ctx context.Context, t T) error {
	const check = "idempotent_replay"
	reqs := t.Requests()
	key := t.Name("conform-idem")
	body := reqs.NewPet("conform-once", nil)
	x, _, ok, err := t.Post(ctx, MustJSON(body), KeyHeader(key), 1)
	if err != nil {
		return err
	}
	t.Expect(check, x, ok, "201 for a create with an Idempotency-Key")
	if !ok {
		return nil
	}
	type form struct { // a retry of the create
		label string
		body  []byte
		key   string
	}
	var retries []form
	if t.Stated("equivalent-requests") {
		full := body
		for k, v := range t.Defaults() {
			if _, ok := full[k]; !ok {
				full = With(full, k, jsonRaw(v))
			}
		}
		retries = append(retries, form{"its members reordered, white space, escapes, the defaults spelt out", Spaced(full), key})
	}
	if t.Stated("key-quoted") {
		retries = append(retries, form{"the key in double quotes", MustJSON(body), `"` + key + `"`})
	}
	for _, retry := range retries {
		y, err := t.Send(ctx, reqs.CreateReq(retry.body, KeyHeader(retry.key)))
		if err != nil {
			return err
		}
		t.Expect(check, y, y.Status == http.StatusCreated, "201, the first answer replayed, for the retry with "+retry.label)
	}
	if !t.Stated("key-reused") {
		return nil
	}
	w, err := t.Send(ctx, reqs.CreateReq(MustJSON(reqs.NewPet("conform-other", nil)), KeyHeader(key)))
	if err != nil {
		return err
	}
	t.Expect(check, w, RefusedWith(w, http.StatusUnprocessableEntity, "idempotency_key_reused"), "422 idempotency_key_reused for the same key with another pet")
	return nil
}

// RefusedWith reports whether x is status with an Error of code.
func RefusedWith(x *judge.Exchange, status int, code string) bool {
	ok, _ := Refused(status, code).Judge(x, "")
	return ok
}

// jsonRaw is canonical JSON text as a value to marshal again.
type jsonRaw string

func (j jsonRaw) MarshalJSON() ([]byte, error) { return []byte(j), nil }

// RefusedKeepsNothing: a create refused 400 stores no outcome for its key;
// the key's next create, a valid one, is processed afresh.
func RefusedKeepsNothing(ctx context.Context, t T) error {
	if !t.Stated("refused-no-outcome") {
		return nil
	}
	reqs := t.Requests()
	required := reqs.Roles.Create.Body.Required[0]
	key := t.Name("conform-refused-key")
	invalid := With(reqs.NewPet("conform-refused", nil), required, Absent)
	x, err := t.Send(ctx, reqs.CreateReq(MustJSON(invalid), KeyHeader(key)))
	if err != nil {
		return err
	}
	t.Expect("negative_data_rejection", x, x.Status == http.StatusBadRequest, "400 for a create without "+required)
	y, _, ok, err := t.Post(ctx, MustJSON(reqs.NewPet("conform-afresh", nil)), KeyHeader(key), 1)
	if err != nil {
		return err
	}
	t.Expect("idempotent_replay", y, ok, "201: the key's earlier create was refused, so it kept no outcome")
	return nil
}

// UnkeyedTwice: the same create twice without a key creates two pets (the
// model judges the second).
func UnkeyedTwice(ctx context.Context, t T) error {
	if !t.Stated("no-key") {
		return nil
	}
	body := MustJSON(t.Requests().NewPet("conform-twice", nil))
	for range 2 {
		x, _, ok, err := t.Post(ctx, body, nil, 1)
		if err != nil {
			return err
		}
		t.Expect("idempotent_replay", x, ok, "201 for each create without an Idempotency-Key")
	}
	return nil
}

// Tenants: another API key's use of an Idempotency-Key is its own: the
// same key and request get a pet of their own, another request is not 422.
func Tenants(ctx context.Context, t T) error {
	const check = "idempotency_scope"
	reqs := t.Requests()
	if reqs.Roles.Create == nil || !t.Stated("key-scope") {
		return nil
	}
	same, other := t.Name("conform-scope"), t.Name("conform-scope")
	body := reqs.NewPet("conform-scoped", nil)
	steps := []struct {
		tenant int
		key    string
		body   map[string]any
		want   string
	}{
		{1, same, body, ""},
		{2, same, body, "201, a pet of the second key's own (not the first key's answer replayed), for the first key's Idempotency-Key and request"},
		{2, same, body, ""}, // the second key's own replay (the model)
		{1, other, reqs.NewPet("conform-scoped", nil), ""},
		{2, other, reqs.NewPet("conform-scoped", nil), "201 for the first key's Idempotency-Key with another request: the key is the first API key's, not this one's"},
	}
	for _, s := range steps {
		x, _, ok, err := t.Post(ctx, MustJSON(s.body), KeyHeader(s.key), s.tenant)
		if err != nil {
			return err
		}
		if s.want != "" { // the checker judges whose pet it is
			t.Expect(check, x, ok, s.want)
		}
	}
	return nil
}

// Concurrency: concurrent creates get distinct ids; a key retried
// concurrently creates one pet. The requests are fixed by the seed; only
// their interleaving is the target's.
func Concurrency(ctx context.Context, t T) error {
	if t.Requests().Roles.Create == nil {
		return nil
	}
	if err := uniqueIDs(ctx, t); err != nil {
		return err
	}
	if !t.Stated("in-flight") {
		return nil
	}
	return concurrentRetries(ctx, t)
}

// concurrently sends reqs at once (from a start line) and returns their
// exchanges in order.
func concurrently(ctx context.Context, t T, reqs []wire.Request) ([]*judge.Exchange, error) {
	xs := make([]*judge.Exchange, len(reqs))
	errs := make([]error, len(reqs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Go(func() {
			<-start
			xs[i], errs[i] = t.Send(ctx, req)
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return xs, nil
}

// uniqueIDs creates pets concurrently: each 201; the checker judges that
// every id is new (check.Model, unique_ids).
func uniqueIDs(ctx context.Context, t T) error {
	const n = 8
	q := t.Requests()
	reqs := make([]wire.Request, n)
	for i := range reqs {
		reqs[i] = q.CreateReq(MustJSON(q.NewPet("conform-concurrent", nil)), nil)
	}
	xs, err := concurrently(ctx, t, reqs)
	if err != nil {
		return err
	}
	for _, x := range xs {
		t.Expect("unique_ids", x, x.Status == http.StatusCreated, fmt.Sprintf("201 for each of %d concurrent creates", n))
	}
	return nil
}

// concurrentRetries sends one keyed create six times at once: each answer
// is 201 or 409 idempotency_key_in_flight, and a retry after them all 201;
// the checker judges, under this check, that every 201 is the key's one
// pet, the retry its answer replayed, and that no other pet bears its name.
func concurrentRetries(ctx context.Context, t T) error {
	const check, n = "concurrent_retries", 6
	q := t.Requests()
	key := t.Name("conform-race")
	body := MustJSON(q.NewPet("conform-raced", nil))
	reqs := make([]wire.Request, n)
	for i := range reqs {
		reqs[i] = q.CreateReq(body, KeyHeader(key))
	}
	ctx = judge.WithBlame(ctx, check)
	xs, err := concurrently(ctx, t, reqs)
	if err != nil {
		return err
	}
	for _, x := range xs {
		t.Expect(check, x, x.Status == http.StatusCreated || RefusedWith(x, http.StatusConflict, "idempotency_key_in_flight"), "201 with the key's pet, or 409 idempotency_key_in_flight")
	}
	y, _, ok, err := t.Post(ctx, body, KeyHeader(key), 1)
	if err != nil {
		return err
	}
	t.Expect(check, y, ok, "201, the key's one pet replayed, after the concurrent retries")
	return nil
}
