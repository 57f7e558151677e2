package httpapi_test

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apitest"
)

// testInt64Edges holds the int64 parameters and members to their exact
// range on the store under test: 2^63-1 is accepted wherever the contract
// allows it, and 2^63, and the numbers float64 rounds to 2^63 (which is what
// kin-openapi makes of the bound), are refused.
func testInt64Edges(t *testing.T, c *apitest.Client) {
	const max = "9223372036854775807"
	p := c.Create(t, `{"name":"Max","categoryId":`+max+`}`)
	if p.CategoryId != math.MaxInt64 {
		t.Fatalf("create: categoryId %d, want %s", p.CategoryId, max)
	}
	res := c.Do(t, "GET", apitest.Path("/pets/")+strconv.FormatInt(p.Id, 10), "")
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"categoryId":`+max) {
		t.Fatalf("get: got %d %s, want 200 with categoryId %s", res.Status, res.Body, max)
	}
	wantError(t, c.Do(t, "GET", apitest.Path("/pets/")+max, ""), http.StatusNotFound, gen.ErrorCodeNotFound, "not found")
	res = c.Do(t, "GET", apitest.Path("/pets?after=")+max, "")
	if res.Status != http.StatusOK || strings.TrimSpace(string(res.Body)) != "[]" || res.Header.Get("Link") != "" {
		t.Fatalf("after=%s: got %d %s Link %q, want 200 [] and no Link", max, res.Status, res.Body, res.Header.Get("Link"))
	}

	for _, over := range []string{"9223372036854775808", "9223372036854775809", "9223372036854776000"} {
		t.Run(over, func(t *testing.T) {
			const msg = "number must be at most " + max
			wantError(t, c.Do(t, "GET", apitest.Path("/pets/")+over, ""), http.StatusBadRequest, gen.ErrorCodeInvalidRequest, "petId: "+msg)
			wantError(t, c.Do(t, "GET", apitest.Path("/pets?after=")+over, ""), http.StatusBadRequest, gen.ErrorCodeInvalidRequest, "after: "+msg)
			wantError(t, c.Do(t, "POST", apitest.Path("/pets"), apitest.Body(`{"name":"Over","categoryId":`+over+`}`)), http.StatusBadRequest, gen.ErrorCodeInvalidRequest, "categoryId: "+msg)
		})
	}
	var all []gen.Pet
	c.Do(t, "GET", apitest.Path("/pets"), "").JSON(t, &all)
	if len(all) != 1 || all[0] != p {
		t.Fatalf("after the refused requests: got %+v, want only %+v", all, p)
	}
}

// testContentTypes creates a pet with each spelling of the one Content-Type
// the contract accepts.
func testContentTypes(t *testing.T, c *apitest.Client) {
	for _, ct := range []string{
		"application/json",
		"application/json; charset=utf-8",
		"application/json; charset=UTF-8",
		`application/json; charset="utf-8"`,
		"application/json;charset=Utf-8",
		"Application/JSON",
	} {
		t.Run(ct, func(t *testing.T) {
			res := c.Do(t, "POST", apitest.Path("/pets"), apitest.Body(`{"name":"Rex","categoryId":1}`), "Content-Type", ct)
			if res.Status != http.StatusCreated {
				t.Fatalf("got %d %s, want 201", res.Status, res.Body)
			}
		})
	}
}
