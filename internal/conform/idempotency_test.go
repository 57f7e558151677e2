package conform_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/petstore/petstore/internal/conform"
)

// TestIdempotentReplay: the real app passes idempotent_replay, with cases
// run; apps that forget the key, or do not mark the replay, fail it.
func TestIdempotentReplay(t *testing.T) {
	for _, tc := range []struct {
		name string
		wrap func(http.Handler) http.Handler
		fail bool
	}{
		{"real app", nil, false},
		{"key ignored", func(app http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.Header.Del("Idempotency-Key")
				app.ServeHTTP(w, r)
			})
		}, true},
		{"replay not marked", func(app http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec := httptest.NewRecorder()
				app.ServeHTTP(rec, r)
				rec.Header().Del("Idempotent-Replayed")
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.WriteHeader(rec.Code)
				w.Write(rec.Body.Bytes())
			})
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := conform.Run(context.Background(), conform.Config{BaseURL: serve(t, tc.wrap), Key: testKey, Checks: []string{"idempotent_replay"}, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			cases := 0
			for _, res := range rep.Results {
				if res.Check == "idempotent_replay" {
					cases += res.Cases
				}
			}
			if cases < 3 {
				t.Fatalf("idempotent_replay ran %d cases, want at least 3", cases)
			}
			if got := rep.Failed("idempotent_replay"); got != tc.fail {
				t.Fatalf("idempotent_replay failed: %v, want %v (failures %+v)", got, tc.fail, rep.Failures)
			}
		})
	}
}
