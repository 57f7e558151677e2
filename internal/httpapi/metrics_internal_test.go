package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/memstore"
)

// countingMiddleware returns a middleware that only counts, with a route
// GET /pets (listPets), and a context for it.
func countingMiddleware(tb testing.TB) (echo.HandlerFunc, echo.Context) {
	m, _, err := newMetrics(memstore.New(), "", "")
	if err != nil {
		tb.Fatal(err)
	}
	m.routes[apitest.Path("/pets")] = &route{
		ops:   []methodSeries{{method: http.MethodGet, series: &series{m: m, op: "listPets", route: apitest.Path("/pets"), operation: true}}},
		other: &series{m: m, op: apitest.Path("/pets"), route: apitest.Path("/pets")},
	}
	c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, apitest.Path("/pets"), nil), httptest.NewRecorder())
	c.SetPath(apitest.Path("/pets"))
	return func(c echo.Context) error {
		m.lookup(c.Path(), c.Request().Method).count(c.Response().Status, time.Millisecond)
		return nil
	}, c
}

// Counting a request allocates nothing once its series exist: the hot path
// is a map lookup, an atomic load, and the metrics' atomics.
func TestMetricsMiddlewareAllocs(t *testing.T) {
	h, c := countingMiddleware(t)
	for _, path := range []string{apitest.Path("/pets"), "/no/route"} {
		c.SetPath(path)
		_ = h(c) // makes the series' children
		if n := testing.AllocsPerRun(1000, func() { _ = h(c) }); n != 0 {
			t.Errorf("route %s: got %v allocations a request, want 0", path, n)
		}
	}
}

func BenchmarkMetricsMiddleware(b *testing.B) {
	h, c := countingMiddleware(b)
	for b.Loop() {
		_ = h(c)
	}
}
