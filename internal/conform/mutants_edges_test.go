package conform_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
)

// edgeMutants break the sentences openapi.yaml gained after the kit of
// issue 42 (f204cc2): a request body's content coding, Accept, refusals
// answered before the body, the forms of HTTP/1.1 itself. Each passes that
// kit unnoticed: .ci/kit-mutants.sh f204cc2 shows it.
var edgeMutants = []mutant{
	{"Content-Encoding ignored, the body read as plain", "illegal", "negative_data_rejection", ignoreHeader("Content-Encoding")},
	{"gzip request bodies decoded", "illegal", "negative_data_rejection", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Content-Encoding") == "gzip" {
				body, _ := io.ReadAll(r.Body)
				if zr, err := gzip.NewReader(bytes.NewReader(body)); err == nil {
					if plain, err := io.ReadAll(zr); err == nil {
						body = plain
						r.Header.Del("Content-Encoding")
					}
				}
				setBody(r, body)
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"Content-Encoding: identity refused", "legal", "positive_data_acceptance", refuseIf(http.StatusBadRequest, func(r *http.Request) bool {
		return r.Header.Get("Content-Encoding") != ""
	})},
	{"Accept ignored", "illegal", "negative_data_rejection", ignoreHeader("Accept")},
	{"application/json admitted whatever its weight", "illegal", "negative_data_rejection", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(strings.ToLower(strings.Join(r.Header.Values("Accept"), ",")), "application/json") {
				r.Header.Del("Accept")
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"only application/json and the wildcard admitted", "legal", "positive_data_acceptance", refuseIf(http.StatusNotAcceptable, func(r *http.Request) bool {
		a := r.Header.Values("Accept")
		return len(a) > 0 && !(len(a) == 1 && (a[0] == "*/*" || a[0] == "application/json"))
	})},
	{"an Accept that does not parse answered 406", "illegal", "negative_data_rejection", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if len(r.Header.Values("Accept")) > 0 && status == http.StatusBadRequest {
			return []byte(`{"code":"not_acceptable","message":"refused","status":406}`)
		}
		return body
	}, func(r *http.Request, status int) int {
		if len(r.Header.Values("Accept")) > 0 && status == http.StatusBadRequest {
			return http.StatusNotAcceptable
		}
		return status
	})},
	{"Accept judged before authentication", "illegal", "auth_before_validation", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") == "" && r.Method == http.MethodGet && len(r.Header.Values("Accept")) > 0 {
				probe := r.Clone(r.Context())
				probe.Header.Set("Authorization", "Bearer "+testKey)
				rec := httptest.NewRecorder()
				app.ServeHTTP(rec, probe)
				if rec.Code == http.StatusNotAcceptable {
					copyResponse(w, rec)
					return
				}
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"the body read before a refusal", "illegal", "refusal_at_once", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			setBody(r, body)
			app.ServeHTTP(w, r)
		})
	}},
	{"100 Continue to every Expect, then the refusal", "illegal", "refusal_at_once", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Expect") == "100-continue" {
				_, _ = r.Body.Read(nil) // net/http sends 100 Continue at the first read
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"refusals keep the connection, the body to be drained", "headers", "refusal_at_once", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		h.Del("Connection")
		return body
	})},
	{"net/http's own plain-text answers", "form", "http_framing", func(app http.Handler) http.Handler {
		return serverDefect{Handler: app, plain: true}
	}},
	{"431 only past 68 KiB (net/http's 4 KiB of slack)", "illegal", "http_framing", func(app http.Handler) http.Handler {
		return serverDefect{Handler: app, maxHeader: headMax}
	}},
	{"HTTP/1.0 refused", "legal", "http_framing", refuseIf(http.StatusBadRequest, func(r *http.Request) bool {
		return !r.ProtoAtLeast(1, 1)
	})},
	{"chunked request bodies refused", "legal", "http_framing", refuseIf(http.StatusBadRequest, func(r *http.Request) bool {
		return len(r.TransferEncoding) > 0
	})},
}

// ignoreHeader takes the header name out of every request before the app
// reads it.
func ignoreHeader(name string) func(http.Handler) http.Handler {
	return func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Del(name)
			app.ServeHTTP(w, r)
		})
	}
}
