package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/pgtest"
)

// TestPostgresAPI runs the whole HTTP suite, contract checks included, over
// the PostgreSQL store.
func TestPostgresAPI(t *testing.T) {
	pgtest.URL(t) // skip once, not in every subtest
	RunAPISuite(t, pgtest.NewStore)
}

// TestPostgresUnavailable answers 503 unavailable, as documented, while the
// database is cut off, writes nothing, and serves again once it is back.
func TestPostgresUnavailable(t *testing.T) {
	proxy, dbURL := pgtest.NewProxy(t, pgtest.Schema(t))
	c := newClient(t, pgtest.Open(t, dbURL))
	before := c.Create(t, `{"name":"Rex","categoryId":1}`)

	proxy.Cut()
	for _, r := range [][3]string{{"GET", apitest.Path("/pets"), ""}, {"POST", apitest.Path("/pets"), `{"name":"Lost","categoryId":1}`}, {"GET", apitest.Path("/pets/1"), ""}} {
		wantError(t, c.Do(t, r[0], r[1], r[2]), http.StatusServiceUnavailable, gen.ErrorCodeUnavailable, "unavailable")
	}
	for _, key := range []string{"", "k"} {
		wantError(t, c.Do(t, "POST", apitest.Path("/pets"), `{"name":"Lost","categoryId":1}`, "Idempotency-Key", key),
			http.StatusServiceUnavailable, gen.ErrorCodeUnavailable, "nothing was written")
	}

	proxy.Restore()
	var after gen.Pet
	apitest.Eventually(t, "the API to create again", func() bool {
		res := c.Do(t, "POST", apitest.Path("/pets"), `{"name":"Tom","categoryId":2}`)
		if res.Status != http.StatusCreated {
			return false
		}
		res.JSON(t, &after)
		return true
	})
	var list []gen.Pet
	res := c.Do(t, "GET", apitest.Path("/pets"), "")
	res.JSON(t, &list)
	if len(list) != 2 || list[0] != before || list[1] != after {
		t.Fatalf("after the outage: got %+v, want [%+v %+v]", list, before, after)
	}
}

// TestPostgresRetryAfterLostCommit is issue 11's proof: the connection to
// the database fails after COMMIT was sent, so the pet is stored but the
// client gets a 503 that says it may have been; the client retries with the
// same Idempotency-Key and gets the stored pet, marked as a replay; exactly
// one pet exists, with the id of that answer.
func TestPostgresRetryAfterLostCommit(t *testing.T) {
	proxy, dbURL := pgtest.NewProxy(t, pgtest.Schema(t))
	c := newClient(t, pgtest.Open(t, dbURL))
	const body = `{"name":"Rex","categoryId":1}`
	fp := pets.NewPet{Name: "Rex", CategoryID: 1, Status: pets.Available}.Fingerprint()
	proxy.LoseAnswerTo(string(fp[:])) // sent only with the batch that ends in COMMIT
	wantError(t, c.Do(t, "POST", apitest.Path("/pets"), body, "Idempotency-Key", "lost-1"), http.StatusServiceUnavailable, gen.ErrorCodeOutcomeUnknown,
		"the pet may have been created; retry with the same Idempotency-Key")

	var res apitest.Response
	apitest.Eventually(t, "the retry to be answered", func() bool {
		res = c.Do(t, "POST", apitest.Path("/pets"), body, "Idempotency-Key", "lost-1")
		return res.Status != http.StatusServiceUnavailable && res.Status != http.StatusConflict
	})
	p, replayed := created(t, res)
	if !replayed {
		t.Fatalf("retry: got %+v not marked as a replay: the lost create was not found", p)
	}
	var list []gen.Pet
	c.Do(t, "GET", apitest.Path("/pets"), "").JSON(t, &list)
	if len(list) != 1 || list[0] != p {
		t.Fatalf("after the lost commit and the retry: got %+v, want exactly [%+v]", list, p)
	}
}

// TestPostgresClientCancel is TestClientCancel over PostgreSQL: the list
// waits behind a lock another session holds, and the client hangs up while
// it waits. It is logged as 499 and aborted, no ERROR line and the canceled
// outcome, never the store unavailable.
func TestPostgresClientCancel(t *testing.T) {
	dbURL := pgtest.Schema(t)
	store := pgtest.Open(t, dbURL)
	checkClientCancel(t, store, pgtest.LockPets(t, dbURL))
}
