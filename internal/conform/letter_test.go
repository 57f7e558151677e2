package conform_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/petstore/petstore/internal/conform"
)

// The corners where a lenient server answers what the contract refuses:
// integers spelt another way, a charset other than UTF-8, a Content-Type
// given twice or as a list. The kit sends each, the real app answers each
// 400, and a server lenient in any one of them fails negative_data_rejection.

// seen is one request the kit sent, as the app received it.
type seen struct{ target, contentType, body string }

// requestLog wraps the app and keeps the status each request got.
type requestLog struct {
	mu  sync.Mutex
	got map[seen]int
}

// The body logged is what the app read of it: a log that read the body
// before the app would ask for a body the app refuses (Expect:
// 100-continue), and wait for one the kit holds back.
func (l *requestLog) wrap(app http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body bytes.Buffer
		r = r.WithContext(r.Context()) // a copy: net/http reads the live one's Body after (closeWriteAndWait)
		r.Body = readCloser{io.TeeReader(r.Body, &body), r.Body}
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, r)
		l.mu.Lock()
		if l.got == nil {
			l.got = map[seen]int{}
		}
		l.got[seen{r.URL.RequestURI(), strings.Join(r.Header.Values("Content-Type"), " | "), body.String()}] = rec.Code
		l.mu.Unlock()
		copyResponse(w, rec)
	})
}

type readCloser struct {
	io.Reader
	io.Closer
}

func TestLetterCases(t *testing.T) {
	t.Parallel()
	var log requestLog
	rep, err := conform.Run(context.Background(), conform.Config{BaseURL: serve(t, log.wrap), Key: testKey, Seed: 1})
	if err != nil || !rep.OK() {
		t.Fatalf("run: %v %+v", err, rep.Failures)
	}
	for _, c := range []struct{ what, target, contentType, body string }{
		{what: "plus sign on petId", target: "/v1/pets/+1"},
		{what: "leading zero on petId", target: "/v1/pets/01"},
		{what: "plus sign on limit", target: "limit=%2B1"},
		{what: "leading zero on limit", target: "limit=01"},
		{what: "empty limit", target: "limit=&"},
		{what: "plus sign on after", target: "after=%2B1"},
		{what: "leading zero on after", target: "after=01"},
		{what: "-0 after", target: "after=-0"},
		{what: "empty after", target: "after=&"},
		{what: "empty status", target: "status=&"},
		{what: "fraction categoryId", body: `"categoryId":1.0`},
		{what: "exponent categoryId", body: `"categoryId":1e0`},
		{what: "charset latin1", contentType: "application/json; charset=latin1"},
		{what: "unknown parameter", contentType: "application/json; conform=1"},
		{what: "Content-Type twice", contentType: "application/json | application/json"},
		{what: "Content-Type list", contentType: "application/json, text/plain"},
	} {
		found := false
		for s, code := range log.got {
			target := s.target + "&" // so that "limit=&" finds an empty value at the end
			if strings.Contains(target, c.target) && strings.Contains(s.body, c.body) && (c.contentType == "" || s.contentType == c.contentType) {
				found = true
				if code != http.StatusBadRequest {
					t.Errorf("%s: %s %s %s: got %d, want 400", c.what, s.target, s.contentType, s.body, code)
				}
			}
		}
		if !found {
			t.Errorf("%s: the kit sent no such request", c.what)
		}
	}
}

var (
	lenientInt    = regexp.MustCompile(`^\+?0*([0-9])`)
	lenientNumber = regexp.MustCompile(`(:\s*-?[0-9]+)(\.0+|e0)\b`)
	categoryID    = regexp.MustCompile(`"categoryId":[0-9]+`)
)

// letterMutants are lenient in one corner each: the kit, with one key,
// fails negative_data_rejection on each (TestLetterMutants).
var letterMutants = []mutant{
	{"sign and leading zeros on petId accepted", "illegal", "negative_data_rejection", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if id, ok := strings.CutPrefix(r.URL.Path, "/v1/pets/"); ok {
				r.URL.Path = "/v1/pets/" + lenientInt.ReplaceAllString(id, "$1")
				r.URL.RawPath = ""
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"sign and leading zeros in the query accepted", "illegal", "negative_data_rejection", rewriteQuery(func(q url.Values) {
		for name, vs := range q {
			if name != "status" && len(vs) == 1 && vs[0] != "-0" {
				q[name] = []string{lenientInt.ReplaceAllString(vs[0], "$1")}
			}
		}
	})},
	{"1.0 taken as 1", "illegal", "negative_data_rejection", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				body, _ := io.ReadAll(r.Body)
				setBody(r, lenientNumber.ReplaceAll(body, []byte("$1")))
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"charset and parameters ignored", "illegal", "negative_data_rejection", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ct := r.Header.Values("Content-Type"); len(ct) == 1 {
				mt, _, _ := strings.Cut(ct[0], ";")
				r.Header.Set("Content-Type", strings.TrimSpace(mt))
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"first Content-Type wins", "illegal", "negative_data_rejection", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ct := r.Header.Values("Content-Type"); len(ct) > 1 {
				r.Header.Set("Content-Type", ct[0])
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"a list of media types read as its first", "illegal", "negative_data_rejection", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ct := r.Header.Values("Content-Type"); len(ct) == 1 {
				first, _, _ := strings.Cut(ct[0], ",")
				r.Header.Set("Content-Type", first)
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"categoryId 2^63 in answers", "form", "response_schema_conformance", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		return categoryID.ReplaceAll(body, []byte(`"categoryId":9223372036854775808`))
	})},
}
