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
	for _, tc := range []struct{ base, want string }{
		{"http://" + addr + apitest.Path("/pets"), "listPets (GET /pets): BASE_URL is the API's base address, the part before the operation's path; try http://" + addr + apitest.Base()},
		{"http://" + addr + apitest.Path("/pets/"), "listPets (GET /pets): BASE_URL is the API's base address, the part before the operation's path; try http://" + addr + apitest.Base()},
		{"http://" + addr + apitest.Path("/pets/42"), "getPet (GET /pets/{petId}): BASE_URL is the API's base address, the part before the operation's path; try http://" + addr + apitest.Base()},
		{"https://api.example/shop" + apitest.Base() + "/pets?x=1", "listPets (GET /pets): BASE_URL is the API's base address, the part before the operation's path; try https://api.example/shop" + apitest.Base()},
		{"http://" + addr + "/pets", "listPets (GET /pets): BASE_URL is the API's base address, the part before the operation's path; try http://" + addr},
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
