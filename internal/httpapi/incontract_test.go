package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/contract"
)

// TestInContractAgreesWithRouter checks that inContract, which routes a
// request again only when its path has escapes of its own, answers 404
// exactly when the contract's router finds no operation, for paths Echo
// routes to an operation.
func TestInContractAgreesWithRouter(t *testing.T) {
	spec, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	router, err := contract.New(spec, BasePath())
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	ok := func(c echo.Context) error { return c.NoContent(http.StatusOK) }
	e.GET(BasePath()+"/pets", ok, inContract(router))
	e.GET(BasePath()+"/pets/:petId", ok, inContract(router))
	segments := []string{"1", "", "%2f", "%2F", "x%2Fy", "é", "é%2Fx", "%C3%A9", "%252f", "a;b", "%20", "..", "%2e%2e", ".", "%00", "1%3Fx", "%23", "+1"}
	var paths []string
	for _, a := range segments {
		paths = append(paths, apitest.Path("/pets/")+a)
		for _, b := range segments {
			paths = append(paths, apitest.Path("/pets/")+a+"/"+b)
		}
	}
	routed := 0
	for _, p := range append(paths, apitest.Path("/pets"), apitest.Path("/pets/")) {
		req, err := http.NewRequest(http.MethodGet, p, nil)
		if err != nil {
			continue
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		_, _, ferr := router.Route(req)
		switch {
		case rec.Code == http.StatusOK && ferr != nil:
			t.Errorf("GET %s: inContract lets it through; the contract's router finds no operation (%v)", p, ferr)
		case rec.Code == http.StatusNotFound && ferr == nil && echoRoutes(e, req):
			t.Errorf("GET %s: inContract answers 404; the contract's router finds an operation", p)
		}
		if rec.Code == http.StatusOK {
			routed++
		}
	}
	if routed < len(segments)-1 { // all but the empty one
		t.Fatalf("only %d paths got through; the test checks too little", routed)
	}
}

// echoRoutes reports whether Echo routes req to a handler at all.
func echoRoutes(e *echo.Echo, req *http.Request) bool {
	c := e.NewContext(req, httptest.NewRecorder())
	e.Router().Find(req.Method, echo.GetPath(req), c)
	return c.Path() != ""
}
