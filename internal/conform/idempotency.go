package conform

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/conform/judge"
)

// The sequences that hold a target to createPet's promises on retries:
// each phase sends the requests and says what each answer must be; the
// model judges what the answers show (the first answer replayed, no second
// pet, a pet of its own for another key).

// idempotencyCases: a retry in every equivalent form replays the first
// answer; the key with another pet is 422; a refused create keeps no
// outcome; without a key every create creates.
func (r *run) idempotencyCases(ctx context.Context) error {
	if r.roles.Create == nil || !r.stated("replay") {
		return nil
	}
	for _, step := range []func(context.Context) error{r.replays, r.keyEquivalence, r.step(cases.RetryHeaders), r.refusedKeepsNothing, r.unkeyedTwice} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

func keyHeader(key string) http.Header { return cases.KeyHeader(key) }

func (r *run) replays(ctx context.Context) error {
	const check = "idempotent_replay"
	key := r.Name("conform-idem")
	body := r.reqs.NewPet("conform-once", nil)
	x, _, ok, err := r.post(ctx, body, keyHeader(key), 1)
	if err != nil {
		return err
	}
	r.Expect(check, x, ok, "201 for a create with an Idempotency-Key")
	if !ok {
		return nil
	}
	type form struct { // a retry of the create
		label string
		body  []byte
		key   string
	}
	var retries []form
	if r.stated("equivalent-requests") {
		full := body
		for k, v := range r.defaults() {
			if _, ok := full[k]; !ok {
				full = with(full, k, jsonRaw(v))
			}
		}
		retries = append(retries, form{"its members reordered, white space, escapes, the defaults spelt out", spaced(full), key})
	}
	if r.stated("key-quoted") {
		retries = append(retries, form{"the key in double quotes", mustJSON(body), `"` + key + `"`})
	}
	for _, retry := range retries {
		y, err := r.Send(ctx, r.reqs.CreateReq(retry.body, keyHeader(retry.key)))
		if err != nil {
			return err
		}
		r.Expect(check, y, y.Status == http.StatusCreated, "201, the first answer replayed, for the retry with "+retry.label)
	}
	if !r.stated("key-reused") {
		return nil
	}
	w, err := r.Send(ctx, r.reqs.CreateReq(mustJSON(r.reqs.NewPet("conform-other", nil)), keyHeader(key)))
	if err != nil {
		return err
	}
	r.Expect(check, w, refusedWith(w, http.StatusUnprocessableEntity, "idempotency_key_reused"), "422 idempotency_key_reused for the same key with another pet")
	return nil
}

// refusedWith reports whether x is status with an Error of code.
func refusedWith(x *exchange, status int, code string) bool {
	ok, _ := refused(status, code).Judge(x, "")
	return ok
}

// jsonRaw is canonical JSON text as a value to marshal again.
type jsonRaw string

func (j jsonRaw) MarshalJSON() ([]byte, error) { return []byte(j), nil }

// refusedKeepsNothing: a create refused 400 stores no outcome for its key;
// the key's next create, a valid one, is processed afresh.
func (r *run) refusedKeepsNothing(ctx context.Context) error {
	if !r.stated("refused-no-outcome") {
		return nil
	}
	key := r.Name("conform-refused-key")
	invalid := with(r.reqs.NewPet("conform-refused", nil), r.roles.Create.Body.Required[0], absent)
	x, err := r.Send(ctx, r.reqs.CreateReq(mustJSON(invalid), keyHeader(key)))
	if err != nil {
		return err
	}
	r.Expect("negative_data_rejection", x, x.Status == http.StatusBadRequest, "400 for a create without "+r.roles.Create.Body.Required[0])
	y, _, ok, err := r.post(ctx, r.reqs.NewPet("conform-afresh", nil), keyHeader(key), 1)
	if err != nil {
		return err
	}
	r.Expect("idempotent_replay", y, ok, "201: the key's earlier create was refused, so it kept no outcome")
	return nil
}

// unkeyedTwice: the same create twice without a key creates two pets (the
// model judges the second).
func (r *run) unkeyedTwice(ctx context.Context) error {
	if !r.stated("no-key") {
		return nil
	}
	body := mustJSON(r.reqs.NewPet("conform-twice", nil))
	for range 2 {
		x, _, ok, err := r.post(ctx, body, nil, 1)
		if err != nil {
			return err
		}
		r.Expect("idempotent_replay", x, ok, "201 for each create without an Idempotency-Key")
	}
	return nil
}

// tenantCases: another API key's use of an Idempotency-Key is its own: the
// same key and request get a pet of their own, another request is not 422.
func (r *run) tenantCases(ctx context.Context) error {
	const check = "idempotency_scope"
	if r.roles.Create == nil || !r.stated("key-scope") {
		return nil
	}
	same, other := r.Name("conform-scope"), r.Name("conform-scope")
	body := r.reqs.NewPet("conform-scoped", nil)
	steps := []struct {
		tenant int
		key    string
		body   map[string]any
		want   string
	}{
		{1, same, body, ""},
		{2, same, body, "201, a pet of the second key's own (not the first key's answer replayed), for the first key's Idempotency-Key and request"},
		{2, same, body, ""}, // the second key's own replay (the model)
		{1, other, r.reqs.NewPet("conform-scoped", nil), ""},
		{2, other, r.reqs.NewPet("conform-scoped", nil), "201 for the first key's Idempotency-Key with another request: the key is the first API key's, not this one's"},
	}
	for _, s := range steps {
		x, _, ok, err := r.post(ctx, s.body, keyHeader(s.key), s.tenant)
		if err != nil {
			return err
		}
		if s.want != "" {
			r.Expect(check, x, ok && x.Header.Get("Idempotent-Replayed") == "", s.want)
		}
	}
	return nil
}

// concurrencyCases: concurrent creates get distinct ids; a key retried
// concurrently creates one pet. The requests are fixed by the seed; only
// their interleaving is the target's.
func (r *run) concurrencyCases(ctx context.Context) error {
	if r.roles.Create == nil {
		return nil
	}
	if err := r.uniqueIDs(ctx); err != nil {
		return err
	}
	if !r.stated("in-flight") {
		return nil
	}
	return r.concurrentRetries(ctx)
}

// concurrently sends reqs at once (from a start line) and returns their
// exchanges in order.
func (r *run) concurrently(ctx context.Context, reqs []request) ([]*exchange, error) {
	xs := make([]*exchange, len(reqs))
	errs := make([]error, len(reqs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Go(func() {
			<-start
			xs[i], errs[i] = r.Send(ctx, req)
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

// uniqueIDs creates pets concurrently: every id distinct.
func (r *run) uniqueIDs(ctx context.Context) error {
	const n = 8
	reqs := make([]request, n)
	for i := range reqs {
		reqs[i] = r.reqs.CreateReq(mustJSON(r.reqs.NewPet("conform-concurrent", nil)), nil)
	}
	xs, err := r.concurrently(ctx, reqs)
	if err != nil {
		return err
	}
	ids := map[int64]int{}
	var dups []int64
	for _, x := range xs {
		id, ok := petID(x.Body)
		if x.Status != http.StatusCreated || !ok {
			r.Expect("unique_ids", x, false, "201 for each of concurrent creates")
			continue
		}
		if ids[id]++; ids[id] == 2 {
			dups = append(dups, id)
		}
	}
	r.Expect("unique_ids", xs[n-1], len(dups) == 0, fmt.Sprintf("%d concurrent creates, %d distinct ids (duplicated: %v)", n, n, dups))
	return nil
}

// concurrentRetries sends one keyed create six times at once: each answer
// is the one pet or 409 idempotency_key_in_flight; a retry after them all
// is that pet replayed, and no other pet bears its name (the model).
func (r *run) concurrentRetries(ctx context.Context) error {
	const check, n = "concurrent_retries", 6
	key := r.Name("conform-race")
	body := mustJSON(r.reqs.NewPet("conform-raced", nil))
	reqs := make([]request, n)
	for i := range reqs {
		reqs[i] = r.reqs.CreateReq(body, keyHeader(key))
	}
	ctx = judge.WithBlame(ctx, check)
	xs, err := r.concurrently(ctx, reqs)
	if err != nil {
		return err
	}
	var pets []int64
	for _, x := range xs {
		id, ok := petID(x.Body)
		switch {
		case x.Status == http.StatusCreated && ok:
			if !slices.Contains(pets, id) {
				pets = append(pets, id)
			}
			r.Expect(check, x, len(pets) == 1, fmt.Sprintf("one pet for one Idempotency-Key retried concurrently (got pets %v)", pets))
		default:
			r.Expect(check, x, refusedWith(x, http.StatusConflict, "idempotency_key_in_flight"), "201 with the key's pet, or 409 idempotency_key_in_flight")
		}
	}
	y, id, ok, err := r.post(ctx, body, keyHeader(key), 1)
	if err != nil {
		return err
	}
	r.Expect(check, y, ok && (len(pets) == 0 || id == pets[0]) && y.Header.Get("Idempotent-Replayed") == "true",
		fmt.Sprintf("the key's one pet %v replayed, after the concurrent retries", pets))
	return nil
}
