package conform_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/conform"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
)

const testKey = "conform-test-key-0123456789"

// serve starts the real app over a memory store on loopback, with h (nil:
// none) wrapped around it.
func serve(t *testing.T, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	app, err := httpapi.New(httpapi.Config{Store: memstore.New(), Keys: apikey.NewSet(apikey.Hash(testKey))})
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = app
	if wrap != nil {
		h = wrap(app)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func specFile(t *testing.T) *openapi3.T {
	t.Helper()
	file, err := apitest.SpecFile()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := openapi3.NewLoader().LoadFromFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestRealAppPassesWhole(t *testing.T) {
	for name, spec := range map[string]*openapi3.T{"embedded": nil, "openapi.yaml": specFile(t)} {
		t.Run(name, func(t *testing.T) {
			rep, err := conform.Run(context.Background(), conform.Config{BaseURL: serve(t, nil), Key: testKey, Spec: spec, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			rep.WriteText(&b)
			if !rep.OK() || rep.Truncated {
				t.Fatalf("the real app fails the kit:\n%s", b.String())
			}
			for _, c := range conform.Checks {
				if !strings.Contains(b.String(), c.Name) {
					t.Errorf("report lacks check %s", c.Name)
				}
			}
			if testing.Verbose() {
				os.Stdout.WriteString(b.String())
			}
		})
	}
}
