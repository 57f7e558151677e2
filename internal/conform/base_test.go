package conform_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/conform"
)

// A BASE_URL that ends in an operation's path is refused before a request is
// sent, naming the base address to use.
func TestBaseURLEndingInAnOperationPath(t *testing.T) {
	t.Parallel()
	addr := apitest.RefusedAddr(t) // nothing listens: a request would fail otherwise
	// The operation named is the first on the path, in the spec's order.
	pets, pet := named(apitest.OpOn("/pets")), named(apitest.OpOn("/pets/{petId}"))
	for _, tc := range []struct{ base, want string }{
		{"http://" + addr + apitest.Path("/pets"), pets + ": BASE_URL is the API's base address, the part before the operation's path; try http://" + addr + apitest.Base()},
		{"http://" + addr + apitest.Path("/pets/"), pets + ": BASE_URL is the API's base address, the part before the operation's path; try http://" + addr + apitest.Base()},
		{"http://" + addr + apitest.Path("/pets/42"), pet + ": BASE_URL is the API's base address, the part before the operation's path; try http://" + addr + apitest.Base()},
		{"https://api.example/shop" + apitest.Base() + "/pets?x=1", pets + ": BASE_URL is the API's base address, the part before the operation's path; try https://api.example/shop" + apitest.Base()},
		{"http://" + addr + "/pets", pets + ": BASE_URL is the API's base address, the part before the operation's path; try http://" + addr},
	} {
		_, err := conform.Run(context.Background(), conform.Config{BaseURL: tc.base, Key: "k"})
		if !errors.Is(err, conform.ErrCannotRun) || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("BASE_URL %s: got %v, want cannot run ending in %q", tc.base, err, tc.want)
		}
	}
	// Paths that only resemble an operation's pass this check (and fail to
	// reach the target instead).
	for _, base := range []string{"http://" + addr + apitest.Base(), "http://" + addr + apitest.Path("/petshop"), "http://" + addr} {
		_, err := conform.Run(context.Background(), conform.Config{BaseURL: base, Key: "k"})
		if err == nil || strings.Contains(err.Error(), "ends in the path of") {
			t.Errorf("BASE_URL %s: got %v, want only the unreachable target", base, err)
		}
	}
}

// named is an operation as the kit names it in a message: "listPets (GET
// /pets)", its path without the base path.
func named(op apitest.Operation) string {
	return op.ID + " (" + op.Method + " " + strings.TrimPrefix(op.Path, apitest.Base()) + ")"
}
