package conform_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// The mutants of issue 59: verdicts a rival can trust. The kit of 8211542
// failed a create answered 503 outcome_unknown as a server error and never
// retried it, so a target that then created the pet twice was judged on
// the 503 alone (.ci/kit-mutants.sh 8211542).
var mutants59 = []mutant{
	{name: "outcome unknown: a create stored, answered 503 outcome_unknown, created again on the retry", family: "meaning", check: "idempotent_replay", wrap: outcomeUnknownFirst(false)},
}

// outcomeUnknownFirst answers the first create of each Idempotency-Key (of
// each API key) that the app answers 201 with 503 outcome_unknown, which
// the contract allows: the pet stored, the answer lost. With keep, the
// outcome is kept with the pet, as the contract says: the retry replays
// it. Without, the outcome is lost: every later request with the key goes
// to the app under another key, so the retry creates the pet again.
func outcomeUnknownFirst(keep bool) func(http.Handler) http.Handler {
	return func(app http.Handler) http.Handler {
		var mu sync.Mutex
		answered := map[string]bool{} // API key and Idempotency-Key, unquoted: 503 answered
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			keys := r.Header.Values("Idempotency-Key")
			if r.Method != http.MethodPost || r.URL.Path != opPath("createPet") || len(keys) != 1 {
				app.ServeHTTP(w, r)
				return
			}
			key := strings.Trim(keys[0], `"`)
			tenant := strings.Fields(r.Header.Get("Authorization"))
			id := strings.Join(tenant, " ") + "\x00" + key
			mu.Lock()
			again := answered[id]
			mu.Unlock()
			if again {
				if !keep { // another key, as long as the syntax allows
					r.Header.Set("Idempotency-Key", strings.Replace(keys[0], key, key[:min(len(key), 250)]+"~lost", 1))
				}
				app.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			app.ServeHTTP(rec, r)
			if rec.Code != http.StatusCreated || rec.Header().Get("Idempotent-Replayed") != "" {
				copyResponse(w, rec)
				return
			}
			mu.Lock()
			answered[id] = true
			mu.Unlock()
			writeOutcomeUnknown(w, rec.Header())
		})
	}
}

// writeOutcomeUnknown writes a 503 outcome_unknown with the headers of
// every answer in h (CORS, RateLimit), not those of a 201.
func writeOutcomeUnknown(w http.ResponseWriter, h http.Header) {
	for k, v := range h {
		switch k {
		case "Location", "Idempotent-Replayed", "Content-Length":
		default:
			w.Header()[k] = v
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	w.Write([]byte(`{"code":"outcome_unknown","message":"the store failed after the create was sent: the pet may have been created; retry with the same Idempotency-Key","status":503}`))
}
