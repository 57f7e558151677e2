package conform

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/apitest"
)

// The model's judgments on crafted histories: each rule fails the answer
// that breaks it, and only that answer.

func testModel() *model {
	return newModel(map[string]string{"status": `"available"`}, "status", "name", func(n string) bool { return strings.HasPrefix(n, "run-") })
}

func pet(name, status string) map[string]string {
	return map[string]string{"name": strconv.Quote(name), "categoryId": "1", "status": strconv.Quote(status)}
}

// create tells m of a create of p (its status as sent) and its 201 with id.
func create(m *model, p map[string]string, id int64, at uint64) []violation {
	m.sending(p, false, "")
	return m.created(createObs{tenant: 1, sent: p, status: 201, id: id, answer: p, doneAt: at})
}

func checks(vs []violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.check)
	}
	slices.Sort(out)
	return out
}

func wantChecks(t *testing.T, what string, vs []violation, want ...string) {
	t.Helper()
	if got := checks(vs); !slices.Equal(got, want) {
		t.Errorf("%s: violations %v (%+v), want %v", what, got, vs, want)
	}
}

func TestModelPages(t *testing.T) {
	m := testModel()
	a, b, c := pet("run-a", "available"), pet("run-b", "pending"), pet("run-c", "available")
	create(m, a, 10, 1)
	create(m, b, 11, 2)
	create(m, c, 13, 3)
	other := pet("someone else", "sold") // another writer's: may appear
	page := func(after int64, limit int, filter string, ids []int64, pets []map[string]string, next map[string]string, sentAt uint64) []violation {
		return m.page(pageObs{after: after, limit: limit, filter: filter, ids: ids, pets: pets, next: next != nil, nextQ: next, sentAt: sentAt, doneAt: sentAt + 1})
	}
	wantChecks(t, "a right page, another writer's pet on it", page(9, 5, "", []int64{10, 11, 12, 13}, []map[string]string{a, b, other, c}, nil, 10))
	wantChecks(t, "a right first page with a next link", page(9, 2, "", []int64{10, 11}, []map[string]string{a, b}, map[string]string{"after": "11", "limit": "2"}, 10))
	wantChecks(t, "an id not above after", page(10, 5, "", []int64{10, 11, 13}, []map[string]string{a, b, c}, nil, 10), "pagination")
	wantChecks(t, "descending", page(9, 5, "", []int64{13, 11, 10}, []map[string]string{c, b, a}, nil, 10), "ordering")
	wantChecks(t, "longer than limit", page(9, 2, "", []int64{10, 11, 13}, []map[string]string{a, b, c}, nil, 10), "pagination")
	wantChecks(t, "a pet of the model missing, no next link", page(9, 5, "", []int64{10, 13}, []map[string]string{a, c}, nil, 10), "pagination")
	wantChecks(t, "a pet beyond the page, a next link", page(9, 1, "", []int64{10}, []map[string]string{a}, map[string]string{"after": "10", "limit": "1"}, 10))
	wantChecks(t, "a pet created after the page was asked for", page(12, 5, "", nil, nil, nil, 2))
	wantChecks(t, "the filter broken", page(9, 5, "pending", []int64{10, 11}, []map[string]string{a, b}, nil, 10), "pagination")
	wantChecks(t, "the filter kept", page(9, 5, "available", []int64{10, 13}, []map[string]string{a, c}, nil, 10))
	wantChecks(t, "a pet of the model altered", page(9, 5, "", []int64{10, 11, 13}, []map[string]string{a, pet("run-b ", "pending"), c}, nil, 10), "stored_as_sent")
	wantChecks(t, "a next link elsewhere", page(9, 2, "", []int64{10, 11}, []map[string]string{a, b}, map[string]string{"after": "12", "limit": "2"}, 10), "pagination")
	wantChecks(t, "a next link dropping the filter", page(9, 1, "pending", []int64{11}, []map[string]string{b}, map[string]string{"after": "11", "limit": "1"}, 10), "pagination")
	wantChecks(t, "a next link after an empty page", page(20, 2, "", nil, nil, map[string]string{"after": "20", "limit": "2"}, 10), "pagination")
}

func TestModelStrayPets(t *testing.T) {
	m := testModel()
	refusedPet, unknown, keyed := pet("run-refused", "available"), pet("run-unknown", "available"), pet("run-keyed", "available")
	m.sending(refusedPet, false, "")
	m.created(createObs{tenant: 1, sent: refusedPet, status: 400})
	m.sending(unknown, false, "")
	m.created(createObs{tenant: 1, sent: unknown, status: 503, code: "outcome_unknown"})
	m.sending(keyed, true, "")
	m.created(createObs{tenant: 1, key: "k", sent: keyed, status: 201, id: 5, answer: keyed, doneAt: 1})
	see := func(id int64, p map[string]string) []violation {
		return m.page(pageObs{after: id - 1, limit: 1, ids: []int64{id}, pets: []map[string]string{p}, next: true, nextQ: map[string]string{"after": strconv.FormatInt(id, 10), "limit": "1"}, sentAt: 100})
	}
	wantChecks(t, "a refused create's pet", see(20, refusedPet), "refused_write")
	wantChecks(t, "a pet an unknown create may have written", see(21, unknown))
	wantChecks(t, "it again", see(21, unknown))
	wantChecks(t, "a second one", see(22, unknown), "stored_as_sent")
	wantChecks(t, "a second pet for a keyed create", see(23, keyed), "idempotent_replay")
	wantChecks(t, "another writer's pet", see(24, pet("someone", "available")))
	unavailable := pet("run-unavailable", "available")
	m.sending(unavailable, false, "")
	m.created(createObs{tenant: 1, sent: unavailable, status: 503, code: "unavailable"})
	wantChecks(t, "a pet of a 503 unavailable create", see(25, unavailable), "refused_write")
	// A 507 and a 429 write nothing, whatever their code.
	for i, o := range []createObs{{status: 507, code: "store_full"}, {status: 507, code: "idempotency_keys_full", key: "k507"}, {status: 429, code: "rate_limited"}} {
		p := pet("run-bound-"+strconv.Itoa(i), "available")
		o.tenant, o.sent = 1, p
		m.sending(p, o.key != "", "")
		m.created(o)
		wantChecks(t, "a pet of a "+strconv.Itoa(o.status)+" "+o.code+" create", see(int64(26+i), p), "refused_write")
	}
}

func TestModelIdempotency(t *testing.T) {
	p, q := pet("run-p", "available"), pet("run-q", "available")
	replay := func(m *model, o createObs) []violation {
		m.sending(o.sent, true, "")
		return m.created(o)
	}
	m := testModel()
	wantChecks(t, "the first create", replay(m, createObs{tenant: 1, key: "k", sent: p, status: 201, id: 7, answer: p, location: apitest.Path("/pets/7"), sentAt: 1, doneAt: 2}))
	wantChecks(t, "a replay", replay(m, createObs{tenant: 1, key: "k", sent: p, status: 201, id: 7, answer: p, location: apitest.Path("/pets/7"), replayed: true, sentAt: 3, doneAt: 4}))
	wantChecks(t, "a replay not marked", replay(m, createObs{tenant: 1, key: "k", sent: p, status: 201, id: 7, answer: p, location: apitest.Path("/pets/7"), sentAt: 5, doneAt: 6}), "idempotent_replay")
	wantChecks(t, "another pet for the key", replay(m, createObs{tenant: 1, key: "k", sent: p, status: 201, id: 8, answer: p, location: apitest.Path("/pets/8"), replayed: true, sentAt: 7, doneAt: 8}), "idempotent_replay")
	wantChecks(t, "the key with another request: 201", replay(m, createObs{tenant: 1, key: "k", sent: q, status: 201, id: 9, answer: q, sentAt: 9, doneAt: 10}), "idempotent_replay")
	wantChecks(t, "the key with another request: 422", replay(m, createObs{tenant: 1, key: "k", sent: q, status: 422, code: "idempotency_key_reused"}))
	wantChecks(t, "the same request: 422", replay(m, createObs{tenant: 1, key: "k", sent: p, status: 422, code: "idempotency_key_reused"}), "idempotent_replay")
	wantChecks(t, "a key never used: 422", replay(m, createObs{tenant: 1, key: "fresh", sent: p, status: 422, code: "idempotency_key_reused"}), "idempotent_replay")
	wantChecks(t, "another tenant, the same key: a pet of its own", replay(m, createObs{tenant: 2, key: "k", sent: p, status: 201, id: 10, answer: p, sentAt: 11, doneAt: 12}))
	wantChecks(t, "another tenant's answer", replay(m, createObs{tenant: 2, key: "k2", sent: p, status: 201, id: 7, answer: p, replayed: true, sentAt: 13, doneAt: 14}))
	m2 := testModel()
	replay(m2, createObs{tenant: 1, key: "s", sent: p, status: 201, id: 7, answer: p, sentAt: 1, doneAt: 2})
	wantChecks(t, "the first tenant's pet for the second", replay(m2, createObs{tenant: 2, key: "s", sent: p, status: 201, id: 7, answer: p, replayed: true, sentAt: 3, doneAt: 4}), "idempotency_scope")
	wantChecks(t, "the first tenant's 422 for the second", replay(m2, createObs{tenant: 2, key: "s", sent: q, status: 422, code: "idempotency_key_reused"}), "idempotency_scope")
	// Concurrent retries: the create's own answer may come after a replay's.
	m3 := testModel()
	wantChecks(t, "a concurrent replay first", replay(m3, createObs{tenant: 1, key: "c", sent: p, status: 201, id: 3, answer: p, replayed: true, sentAt: 1, doneAt: 5}))
	wantChecks(t, "the create's own answer after it", replay(m3, createObs{tenant: 1, key: "c", sent: p, status: 201, id: 3, answer: p, sentAt: 2, doneAt: 6}))
	wantChecks(t, "a second unmarked answer", replay(m3, createObs{tenant: 1, key: "c", sent: p, status: 201, id: 3, answer: p, sentAt: 3, doneAt: 7}), "idempotent_replay")
	wantChecks(t, "409 in flight", replay(m3, createObs{tenant: 1, key: "c", sent: p, status: 409, code: "idempotency_key_in_flight"}))
}

func TestModelCreatesAndGets(t *testing.T) {
	m := testModel()
	a := pet("run-a", "available")
	noStatus := map[string]string{"name": `"run-d"`, "categoryId": "2"}
	wantChecks(t, "a create", create(m, a, 1, 1))
	wantChecks(t, "a create without a key, the same again: a new pet", create(m, a, 2, 2))
	wantChecks(t, "the same pet again for it", create(m, a, 2, 3), "idempotent_replay")
	wantChecks(t, "another pet's id", create(m, pet("run-e", "sold"), 1, 4), "unique_ids")
	m.sending(noStatus, false, "")
	wantChecks(t, "the default left out of the answer", m.created(createObs{tenant: 1, sent: noStatus, status: 201, id: 3, answer: noStatus, doneAt: 5}), "stored_as_sent")
	wantChecks(t, "the default in the answer", m.got(getObs{id: 3, status: 200, gotID: 3, answer: m.withDefaults(noStatus), sentAt: 9}))
	wantChecks(t, "getPet: another pet", m.got(getObs{id: 1, status: 200, gotID: 2, answer: a, sentAt: 9}), "stored_as_sent")
	wantChecks(t, "getPet: altered", m.got(getObs{id: 1, status: 200, gotID: 1, answer: pet("run-a", "sold"), sentAt: 9}), "stored_as_sent")
	wantChecks(t, "getPet: lost", m.got(getObs{id: 1, status: 404, sentAt: 9}), "durability")
	wantChecks(t, "getPet: asked before it was created", m.got(getObs{id: 1, status: 404, sentAt: 1}))
	wantChecks(t, "getPet: another writer's", m.got(getObs{id: 50, status: 200, gotID: 50, answer: pet("x", "sold"), sentAt: 9}))
}
