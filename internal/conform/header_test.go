package conform_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/petstore/petstore/internal/conform"
)

// The kit derives cases from header parameters as from query and path ones:
// for Idempotency-Key, keys too long, with a character outside the syntax,
// given twice and empty, each answered 400 by the real app; and valid keys,
// the longest the pattern allows among them, each accepted. Run twice with
// one seed against one server, the valid keys meet again and are retries of
// the same requests, not keys reused.
func TestHeaderParameterCases(t *testing.T) {
	t.Parallel()
	type sent struct {
		keys   []string
		status int
	}
	var mu sync.Mutex
	var log []sent
	base := serve(t, func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			keys, ok := r.Header["Idempotency-Key"]
			// The forms phase sends each illegal form with valid keys of its
			// own (conform-forms-…), refused for the form: not these cases.
			if !ok || r.Method != http.MethodPost || len(keys) == 1 && strings.HasPrefix(keys[0], "conform-forms-") {
				app.ServeHTTP(w, r)
				return
			}
			sw := &statusWriter{ResponseWriter: w}
			app.ServeHTTP(sw, r)
			mu.Lock()
			log = append(log, sent{keys, sw.status})
			mu.Unlock()
		})
	})
	for run := range 2 {
		log = nil
		rep, err := conform.Run(context.Background(), conform.Config{BaseURL: base, Key: testKey, Seed: 5,
			Checks: []string{"negative_data_rejection", "positive_data_acceptance"}})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() {
			t.Fatalf("run %d: failures %+v", run, rep.Failures)
		}
		found := map[string]bool{}
		for _, s := range log {
			var kind string
			switch k := s.keys; {
			case len(k) == 2:
				kind = "given twice"
			case len(k) == 1 && k[0] == "":
				kind = "empty"
			case len(k) == 1 && len(k[0]) > 257:
				kind = "too long"
			case len(k) == 1 && !keySyntax.MatchString(k[0]):
				kind = "outside the syntax"
			case len(k) == 1 && len(k[0]) == 255:
				kind = "valid, longest"
			case len(k) == 1:
				kind = "valid"
			}
			if strings.HasPrefix(kind, "valid") != (s.status == http.StatusCreated) {
				t.Errorf("run %d: Idempotency-Key %q (%s) answered %d", run, s.keys, kind, s.status)
			}
			found[kind] = true
		}
		for _, kind := range []string{"given twice", "empty", "too long", "outside the syntax", "valid, longest", "valid"} {
			if !found[kind] {
				t.Errorf("run %d: no Idempotency-Key case %q among %d sent", run, kind, len(log))
			}
		}
	}
}

// keySyntax is Idempotency-Key's pattern in openapi.yaml.
var keySyntax = regexp.MustCompile(`^("[A-Za-z0-9._~:+/=-]{1,255}"|[A-Za-z0-9._~:+/=-]{1,255})$`)

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}
