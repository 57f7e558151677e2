package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apitest"
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
	for _, r := range [][3]string{{"GET", "/v1/pets", ""}, {"POST", "/v1/pets", `{"name":"Lost","categoryId":1}`}, {"GET", "/v1/pets/1", ""}} {
		wantError(t, c.Do(t, r[0], r[1], r[2]), http.StatusServiceUnavailable, gen.ErrorCodeUnavailable, "unavailable")
	}

	proxy.Restore()
	var after gen.Pet
	apitest.Eventually(t, "the API to create again", func() bool {
		res := c.Do(t, "POST", "/v1/pets", `{"name":"Tom","categoryId":2}`)
		if res.Status != http.StatusCreated {
			return false
		}
		res.JSON(t, &after)
		return true
	})
	var list []gen.Pet
	res := c.Do(t, "GET", "/v1/pets", "")
	res.JSON(t, &list)
	if len(list) != 2 || list[0] != before || list[1] != after {
		t.Fatalf("after the outage: got %+v, want [%+v %+v]", list, before, after)
	}
}
