package httpapi_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/newpet"
	"github.com/petstore/petstore/internal/pgtest"
	"github.com/petstore/petstore/internal/strict"
)

// TestPostgresAPI runs the whole HTTP suite, contract checks included, over
// the PostgreSQL store.
func TestPostgresAPI(t *testing.T) {
	pgtest.URL(t) // skip once, not in every subtest
	RunAPISuite(t, pgtest.NewStore)
}

// TestPostgresRoundTrip runs the round trip through HTTP on PostgreSQL.
func TestPostgresRoundTrip(t *testing.T) {
	pgtest.URL(t)
	RunRoundTrip(t, pgtest.NewStore)
}

// TestPostgresUnavailable answers 503 unavailable, as documented, while the
// database is cut off, writes nothing, and serves again once it is back.
func TestPostgresUnavailable(t *testing.T) {
	proxy, dbURL := pgtest.NewProxy(t, pgtest.Schema(t))
	c := newClient(t, pgtest.Open(t, dbURL))
	before := c.Create(t, apitest.Body(`{"name":"Rex","categoryId":1}`))

	proxy.Cut()
	for _, r := range [][3]string{{"GET", apitest.Path("/pets"), ""}, {"POST", apitest.Path("/pets"), apitest.Body(`{"name":"Lost","categoryId":1}`)}, {"GET", apitest.Path("/pets/1"), ""}} {
		wantError(t, c.Do(t, r[0], r[1], r[2]), http.StatusServiceUnavailable, gen.ErrorCodeUnavailable, "unavailable")
	}
	for _, key := range []string{"", "k"} {
		wantError(t, c.Do(t, "POST", apitest.Path("/pets"), apitest.Body(`{"name":"Lost","categoryId":1}`), "Idempotency-Key", key),
			http.StatusServiceUnavailable, gen.ErrorCodeUnavailable, "nothing was written")
	}

	proxy.Restore()
	var after gen.Pet
	apitest.Eventually(t, "the API to create again", func() bool {
		res := c.Do(t, "POST", apitest.Path("/pets"), apitest.Body(`{"name":"Tom","categoryId":2}`))
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
	body := apitest.Body(`{"name":"Rex","categoryId":1}`)
	fp := fingerprint(t, body)
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

// TestPostgresUpgrade: a database made by 95dcf58 (1.2.0's server, before
// pets had members without behaviour: internal/pgstore/testdata, written
// by make-upgrade-dump) upgrades with nothing lost. The store's migrations
// run on it; every pet reads back as the old server answered it, by getPet
// and by a page; the create it kept under an Idempotency-Key replays (the
// same request: the same pet, marked replayed, nothing new stored), and a
// different request with that key is 422; a new pet takes a later id.
func TestPostgresUpgrade(t *testing.T) {
	dump, err := os.ReadFile("../pgstore/testdata/upgrade-95dcf58.sql")
	if err != nil {
		t.Fatal(err)
	}
	dbURL := pgtest.Restore(t, dump, "upgrade_from_rev")
	// The outcome was kept for 30 days from the day the dump was made;
	// this test is about the upgrade, not the retention window.
	pgtest.Exec(t, dbURL, "update idempotency_keys set expires_at = now() + interval '1 hour'")
	const oldKey = "upgrade-key-0123456789abcdef0123456789" // make-upgrade-dump's
	app, err := httpapi.New(httpapi.Config{Store: pgtest.Open(t, dbURL), Keys: apikey.NewSet(apikey.Hash(oldKey))})
	if err != nil {
		t.Fatal(err)
	}
	c := &apitest.Client{Contract: apitest.Load(t), Handler: app, Key: oldKey}
	want := []string{ // as 95dcf58 answered them
		`{"categoryId":1,"id":1,"name":"Rex","status":"available"}`,
		`{"categoryId":2,"id":2,"name":"Tom \"the cat\" \u003c\u0026\u003e","status":"pending"}`,
		"{\"categoryId\":9223372036854775807,\"id\":3,\"name\":\"\u05e8\u05e7\u05e1\u200f 🐈\u200d⬛ é\",\"status\":\"sold\"}",
		`{"categoryId":7,"id":4,"name":"Keyed","status":"sold"}`,
		`{"categoryId":3,"id":5,"name":"` + strings.Repeat("x", 100) + `","status":"available"}`,
	}
	for i, w := range want {
		if res := c.Do(t, "GET", apitest.Path(fmt.Sprintf("/pets/%d", i+1)), ""); res.Status != http.StatusOK || string(res.Body) != w+"\n" {
			t.Errorf("getPet %d: %d %s, want %s", i+1, res.Status, res.Body, w)
		}
	}
	list := "[" + strings.Join(want, ",") + "]\n"
	if res := c.Do(t, "GET", apitest.Path("/pets"), ""); string(res.Body) != list {
		t.Errorf("listPets: %s, want %s", res.Body, list)
	}
	keyed := apitest.Body(`{"status":"sold","categoryId":7,"name":"Keyed"}`)
	res := c.Do(t, "POST", apitest.Path("/pets"), keyed, "Idempotency-Key", "upgrade-1")
	if res.Status != http.StatusCreated || res.Header.Get("Idempotent-Replayed") != "true" || string(res.Body) != want[3]+"\n" {
		t.Errorf("the kept create, retried: %d %q %s; want 201 replayed %s", res.Status, res.Header.Get("Idempotent-Replayed"), res.Body, want[3])
	}
	res = c.Do(t, "POST", apitest.Path("/pets"), apitest.Body(`{"name":"Keyed","categoryId":7}`), "Idempotency-Key", "upgrade-1")
	wantError(t, res, http.StatusUnprocessableEntity, gen.ErrorCodeIdempotencyKeyReused, "")
	if res := c.Do(t, "GET", apitest.Path("/pets"), ""); string(res.Body) != list {
		t.Errorf("after the retries: %s, want %s (nothing new)", res.Body, list)
	}
	// (A keyed batch takes an id for each member, even one that replays:
	// ids are unique and increasing, not dense.)
	if p := c.Create(t, apitest.Body(`{"name":"New","categoryId":1}`)); p.Id <= 5 {
		t.Errorf("a new pet: id %d, want one after 5", p.Id)
	}
}

// fingerprint is the Idempotency-Key fingerprint of a create's body, as the
// server maps it from the embedded spec's NewPet.
func fingerprint(t *testing.T, body string) [32]byte {
	t.Helper()
	doc, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	m, err := newpet.New(doc.Components.Schemas["NewPet"].Value)
	if err != nil {
		t.Fatal(err)
	}
	v, err := strict.DecodeJSON([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	n, err := m.NewPet(v)
	if err == nil {
		n, err = n.Normalize()
	}
	if err != nil {
		t.Fatal(err)
	}
	return n.Fingerprint()
}
