package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/memstore"
)

func testConfig() Config {
	return Config{Store: memstore.New(), Keys: apikey.NewSet(apikey.Hash("test-key-0123456789abcdef0123456789"))}
}

// TestNewFailsClosed: an operation the spec has and the generated code does
// not serve, or a generated route the spec does not have, fails the app's
// construction, rather than being served without its chain.
func TestNewFailsClosed(t *testing.T) {
	if _, err := newApp(testConfig(), spec(t)); err != nil {
		t.Fatalf("the embedded spec: %v", err)
	}

	// Each operation of the spec, and a method its path lacks: the spec
	// gains an operation there, and loses the operation.
	for _, op := range apitest.Operations() {
		path := strings.TrimPrefix(op.Path, apitest.Base())
		route := apitest.Base() + echoPath.Replace(path)
		method := unusedMethod(spec(t).Paths.Value(path))
		added := spec(t)
		added.Paths.Value(path).SetOperation(method, &openapi3.Operation{
			OperationID: "testOnlyAdded",
			Responses:   openapi3.NewResponses(openapi3.WithStatus(204, &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription("Done.")})),
		})
		_, err := newApp(testConfig(), added)
		if err == nil || !strings.Contains(err.Error(), method+" "+route+" (testOnlyAdded): no generated handler") {
			t.Errorf("%s %s, an operation added to the spec, not to gen/: got %v, want New to refuse", method, path, err)
		}

		removed := spec(t)
		removed.Paths.Value(path).SetOperation(op.Method, nil)
		_, err = newApp(testConfig(), removed)
		if err == nil || !strings.Contains(err.Error(), op.Method+" "+route+": a generated route that is no operation of the spec") {
			t.Errorf("%s (%s %s) gone from the spec, still in gen/: got %v, want New to refuse", op.ID, op.Method, path, err)
		}
	}
}

// unusedMethod is a method none of item's operations has.
func unusedMethod(item *openapi3.PathItem) string {
	for _, m := range []string{http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodPost, http.MethodGet} {
		if item.GetOperation(m) == nil {
			return m
		}
	}
	panic("a path with every method")
}

// TestRequireOperations: a route under the base path that did not get an
// operation's chain fails the check, whoever added it; routes outside it
// do not.
func TestRequireOperations(t *testing.T) {
	e := echo.New()
	h := func(echo.Context) error { return nil }
	e.GET(apitest.Path("/pets"), h)
	e.GET(apitest.Base(), h)
	e.GET(apitest.Base()+"x/other", h) // shares the base path's letters, not its segment
	e.GET("/healthz", h)
	ops := &operations{base: apitest.Base()}
	chains := map[string]*opChain{"GET " + apitest.Base() + "/pets": {added: true}}
	if err := requireOperations(e.Routes(), ops, chains); err == nil || !strings.Contains(err.Error(), "GET "+apitest.Base()+": served under "+apitest.Base()+" without its operation's chain") {
		t.Errorf("got %v, want GET %s refused", err, apitest.Base())
	}
	chains["GET "+apitest.Base()] = &opChain{added: true}
	if err := requireOperations(e.Routes(), ops, chains); err != nil {
		t.Errorf("every route under the base path has its chain: %v", err)
	}
	e.POST(apitest.Path("/pets"), h)
	chains["POST "+apitest.Base()+"/pets"] = &opChain{} // in the table, never added with its chain
	if err := requireOperations(e.Routes(), ops, chains); err == nil || !strings.Contains(err.Error(), "POST "+apitest.Base()+"/pets") {
		t.Errorf("got %v, want POST /pets refused", err)
	}
}

// TestPublicOperation: the table, not the code, says whether an operation
// requires the key: getPet made public (security: [] in the spec) answers
// without one, and the others still refuse a request without one.
func TestPublicOperation(t *testing.T) {
	s := spec(t)
	s.Paths.Value("/pets/{petId}").Get.Security = &openapi3.SecurityRequirements{}
	app, err := newApp(testConfig(), s)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		target string
		want   int
	}{{apitest.Path("/pets/1"), http.StatusNotFound}, {apitest.Path("/pets"), http.StatusUnauthorized}} {
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.target, nil))
		if rec.Code != tc.want {
			t.Errorf("GET %s without a key: got %d %s, want %d", tc.target, rec.Code, rec.Body, tc.want)
		}
	}
}

func spec(t *testing.T) *openapi3.T {
	t.Helper()
	s, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
