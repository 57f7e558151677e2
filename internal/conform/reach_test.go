package conform_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/petstore/petstore/internal/conform"
)

// counting wraps a handler and counts the requests it gets.
func counting(n *atomic.Int64) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			h.ServeHTTP(w, r)
		})
	}
}

// The kit never sends more than MaxRequests, says so in the report, and
// counts exactly what the target received.
func TestRequestBound(t *testing.T) {
	t.Parallel()
	for _, max := range []int{1, 20, 100} {
		var got atomic.Int64
		rep, err := conform.Run(context.Background(), conform.Config{BaseURL: serve(t, counting(&got)), Key: testKey, Seed: 5, MaxRequests: max})
		if err != nil {
			t.Fatalf("max %d: %v", max, err)
		}
		if n := got.Load(); n > int64(max) || int64(rep.Requests) != n || !rep.Truncated {
			t.Errorf("max %d: the target got %d requests, the report says %d (truncated %v); want at most %d, the same count, truncated", max, n, rep.Requests, rep.Truncated, max)
		}
	}
}

// The kit talks to BASE_URL's host alone: it neither follows a redirect nor
// a Location or Link rel="next" that points elsewhere, and fails the checks
// they belong to.
func TestKitStaysOnItsHost(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer other.Close()
	offHost := func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Method == http.MethodGet && r.URL.Query().Get("limit") == "1":
				http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			default: // a Location and a Link rel="next" on the other host
				rec := httptest.NewRecorder()
				app.ServeHTTP(rec, r)
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				if loc := rec.Header().Get("Location"); loc != "" {
					w.Header().Set("Location", other.URL+loc)
				}
				if link := rec.Header().Get("Link"); strings.HasPrefix(link, "</") {
					w.Header().Set("Link", "<"+other.URL+link[1:])
				}
				w.WriteHeader(rec.Code)
				w.Write(rec.Body.Bytes())
			}
		})
	}
	rep, err := conform.Run(context.Background(), conform.Config{BaseURL: serve(t, offHost), Key: testKey, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the kit sent %d requests to another host", n)
	}
	for _, check := range []string{"use_after_create", "pagination", "status_code_conformance"} { // Location, Link, the 307
		if !rep.Failed(check) {
			var b strings.Builder
			rep.WriteText(&b)
			t.Errorf("%s passed; want it failed:\n%s", check, b.String())
		}
	}
}
