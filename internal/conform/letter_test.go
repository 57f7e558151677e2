package conform_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/petstore/petstore/internal/apitest"
)

// The corners where a lenient server answers what the contract refuses
// (TestLetterCases), and a log of what the app got.

// seen is one request the kit sent, as the app received it: body is what
// the app read of it, length the Content-Length it declared (-1 unknown).
type seen struct {
	target, contentType, body string
	length                    int64
}

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
		l.got[seen{r.URL.RequestURI(), strings.Join(r.Header.Values("Content-Type"), " | "), body.String(), r.ContentLength}] = rec.Code
		l.mu.Unlock()
		copyResponse(w, rec)
	})
}

type readCloser struct {
	io.Reader
	io.Closer
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
			if id, ok := strings.CutPrefix(r.URL.Path, apitest.Path("/pets/")); ok {
				r.URL.Path = apitest.Path("/pets/") + lenientInt.ReplaceAllString(id, "$1")
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
