package conform_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/petstore/petstore/internal/apitest"
)

// The mutants of issue 42, one table a family of defect. Each breaks a
// sentence of openapi.yaml and each passes the kit as it was before the
// model (5953675): .ci/kit-mutants.sh shows it.

// meaningMutants answer well-formed but wrong: only a model of what the
// target holds tells.
var meaningMutants = []mutant{
	{"store forgets all but the newest 40 pets", "meaning", "durability", forgetful(40)},
	{"names stored trimmed, the 201 echoing them as sent", "meaning", "stored_as_sent", trimmedNames},
	{"categoryId read back through a float64", "meaning", "stored_as_sent", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if r.Method != http.MethodGet || status != http.StatusOK {
			return body
		}
		return categoryID.ReplaceAllFunc(body, func(m []byte) []byte {
			f, _, _ := big.ParseFloat(string(m[len(`"categoryId":`):]), 10, 53, big.ToNearestEven)
			n, _ := f.Int(nil)
			if !n.IsInt64() {
				n.SetInt64(1<<63 - 1)
			}
			return []byte(`"categoryId":` + n.String())
		})
	})},
	{"the default limit not applied", "meaning", "pagination", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if q := r.URL.Query(); r.URL.Path == apitest.Path("/pets") && r.Method == http.MethodGet && !q.Has("limit") {
				r.URL.RawQuery = strings.TrimPrefix(r.URL.RawQuery+"&limit=100", "&")
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"identical creates without a key answered with the first pet", "meaning", "idempotent_replay", dedupeUnkeyed},
	{"401 answered with code invalid_request", "meaning", "error_body", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		return bytes.Replace(body, []byte(`"code":"unauthorized"`), []byte(`"code":"invalid_request"`), 1)
	})},
	{"a refused keyed create keeps its key", "meaning", "idempotent_replay", refusedKeyKept},
	{"a quoted Idempotency-Key names another key than the bare one", "meaning", "idempotent_replay", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if k := r.Header.Get("Idempotency-Key"); quotedKey.MatchString(k) {
				r.Header.Set("Idempotency-Key", "Q."+strings.Trim(k, `"`))
			}
			app.ServeHTTP(w, r)
		})
	}},
}

// legalMutants refuse a form the contract allows.
var legalMutants = []mutant{
	{"a quoted charset refused", "legal", "positive_data_acceptance", refuseIf(http.StatusBadRequest, func(r *http.Request) bool {
		return strings.Contains(r.Header.Get("Content-Type"), `charset="`)
	})},
	{"a media type in capitals refused", "legal", "positive_data_acceptance", refuseIf(http.StatusBadRequest, func(r *http.Request) bool {
		mt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
		return mt != strings.ToLower(mt)
	})},
	{"the scheme BEARER in capitals refused", "legal", "ignored_auth", refuseIf(http.StatusUnauthorized, func(r *http.Request) bool {
		return strings.HasPrefix(r.Header.Get("Authorization"), "BEARER ")
	})},
	{"names with a direction mark or a zero-width joiner refused", "legal", "positive_data_acceptance", refuseIf(http.StatusBadRequest, func(r *http.Request) bool {
		return r.Method == http.MethodPost && bodyHas(r, "\u200d", "\u200e", "\u200f", "\u061c")
	})},
	{"Idempotency-Keys with ~ : + / = refused", "legal", "positive_data_acceptance", refuseIf(http.StatusBadRequest, func(r *http.Request) bool {
		return strings.ContainsAny(r.Header.Get("Idempotency-Key"), "~:+/=")
	})},
	{"a body of exactly 1 MiB refused", "legal", "positive_data_acceptance", refuseIf(http.StatusRequestEntityTooLarge, func(r *http.Request) bool {
		return r.ContentLength >= 1<<20
	})},
}

// illegalMutants accept a form the contract forbids.
var illegalMutants = []mutant{
	{"HEAD answered as GET", "illegal", "unsupported_method", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodHead {
				r.Method = http.MethodGet
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"no body size limit", "illegal", "negative_data_rejection", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > 1<<20 {
				body, _ := io.ReadAll(r.Body)
				setBody(r, bytes.TrimRight(body, " "))
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"invalid UTF-8 taken as U+FFFD", "illegal", "negative_data_rejection", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				body, _ := io.ReadAll(r.Body)
				setBody(r, bytes.ToValidUTF8(body, []byte("\uFFFD")))
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"charset utf8 taken as utf-8", "illegal", "negative_data_rejection", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ct := r.Header.Values("Content-Type"); len(ct) == 1 {
				r.Header.Set("Content-Type", strings.Replace(ct[0], "charset=utf8", "charset=utf-8", 1))
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"a trailing slash served as the path without it", "illegal", "unknown_path", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, apitest.Path("/")) && strings.HasSuffix(r.URL.Path, "/") {
				r.URL.Path, r.URL.RawPath = strings.TrimSuffix(r.URL.Path, "/"), ""
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"405 only with a key, 401 without", "illegal", "unsupported_method", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			app.ServeHTTP(rec, r)
			if rec.Code == http.StatusMethodNotAllowed && r.Header.Get("Authorization") == "" {
				unauthorized(w, `Bearer realm="petstore"`)
				return
			}
			copyResponse(w, rec)
		})
	}},
	{"any OPTIONS answered as a preflight", "illegal", "unsupported_method", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodOptions {
				w.Header().Set("Access-Control-Allow-Origin", "*")
				w.Header().Set("Access-Control-Allow-Methods", "GET,POST")
				w.Header().Set("Access-Control-Allow-Headers", "Authorization,Content-Type,Idempotency-Key")
				w.WriteHeader(http.StatusNoContent)
				return
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"a body without Content-Type ignored where none is taken", "illegal", "negative_data_rejection", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && r.Header.Get("Content-Type") == "" {
				// A copy: net/http reads the body it left to the handler
				// by the live request's ContentLength, and a live one set
				// to 0 makes it start its background read after the
				// handler ("invalid concurrent Body.Read call").
				r = r.Clone(r.Context())
				r.Body, r.ContentLength = http.NoBody, 0
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"no Access-Control-Allow-Origin on answers", "illegal", "cors", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if r.Method != http.MethodOptions {
			h.Del("Access-Control-Allow-Origin")
		}
		return body
	})},
}

// tenancyMutants break the promises across API keys and under concurrent
// requests.
var tenancyMutants = []mutant{
	{"Idempotency-Key scoped to the server, not to the API key", "tenancy", "idempotency_scope", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Idempotency-Key") != "" && r.Header.Get("Authorization") == "Bearer "+testKey2 {
				r.Header.Set("Authorization", "Bearer "+testKey)
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"concurrent retries of a key each create a pet (check, then insert)", "tenancy", "concurrent_retries", racyKeys},
}

// headerMutants send a header value only the first of which keeps the
// contract, or a value the contract gives another case.
var headerMutants = []mutant{
	{"a second WWW-Authenticate challenge", "headers", "response_headers_conformance", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if status == http.StatusUnauthorized {
			h.Add("WWW-Authenticate", `Basic realm="petstore"`)
		}
		return body
	})},
	{`error="invalid_token" when no key was sent`, "headers", "header_values", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if status == http.StatusUnauthorized {
			h.Set("WWW-Authenticate", `Bearer realm="petstore", error="invalid_token"`)
		}
		return body
	})},
	{"Idempotent-Replayed: true on every create", "headers", "header_values", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if status == http.StatusCreated {
			h.Set("Idempotent-Replayed", "true")
		}
		return body
	})},
	{"a second Location, another pet's", "headers", "response_headers_conformance", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if status == http.StatusCreated {
			h.Add("Location", apitest.Path("/pets/1"))
		}
		return body
	})},
}

// ---- the helpers of these mutants

// quotedKey is an Idempotency-Key in its structured-field form.
var quotedKey = regexp.MustCompile(`^"[A-Za-z0-9._~:+/=-]{1,255}"$`)

// refuseIf answers status, a well-formed Error, where refuse says so.
func refuseIf(status int, refuse func(*http.Request) bool) func(http.Handler) http.Handler {
	return func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case !refuse(r):
				app.ServeHTTP(w, r)
			case status == http.StatusUnauthorized:
				unauthorized(w, `Bearer realm="petstore", error="invalid_token"`)
			default:
				code := map[int]string{400: "invalid_request", 406: "not_acceptable", 413: "payload_too_large"}[status]
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				fmt.Fprintf(w, `{"code":%q,"message":"refused","status":%d}`, code, status)
			}
		})
	}
}

func unauthorized(w http.ResponseWriter, challenge string) {
	w.Header().Set("WWW-Authenticate", challenge)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprint(w, `{"code":"unauthorized","message":"refused","status":401}`)
}

// bodyHas reports whether the request's body, as JSON decodes it, holds
// one of subs; the body stays readable.
func bodyHas(r *http.Request, subs ...string) bool {
	body, _ := io.ReadAll(r.Body)
	setBody(r, body)
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	text := fmt.Sprint(m)
	return slices.ContainsFunc(subs, func(s string) bool { return strings.Contains(text, s) })
}

// forgetful keeps only the newest keep pets created: an older one is
// answered 404 by id and left out of listings.
func forgetful(keep int) func(http.Handler) http.Handler {
	return func(app http.Handler) http.Handler {
		var mu sync.Mutex
		var order []int64
		forgotten := func(id int64) bool {
			mu.Lock()
			defer mu.Unlock()
			i := slices.Index(order, id)
			return i >= 0 && i < len(order)-keep
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seg := strings.TrimPrefix(r.URL.Path, apitest.Path("/pets/"))
			if id, err := strconv.ParseInt(seg, 10, 64); err == nil && strconv.FormatInt(id, 10) == seg && r.Method == http.MethodGet && forgotten(id) {
				r.URL.Path = apitest.Path("/pets/9223372036854775807") // a pet that is not there: the app's own 404
			}
			rec := httptest.NewRecorder()
			app.ServeHTTP(rec, r)
			var pet struct{ ID int64 }
			if rec.Code == http.StatusCreated && json.Unmarshal(rec.Body.Bytes(), &pet) == nil {
				mu.Lock()
				order = append(order, pet.ID)
				mu.Unlock()
			}
			var page []json.RawMessage
			if r.URL.Path == apitest.Path("/pets") && rec.Code == http.StatusOK && json.Unmarshal(rec.Body.Bytes(), &page) == nil {
				page = slices.DeleteFunc(page, func(p json.RawMessage) bool {
					var pet struct{ ID int64 }
					return json.Unmarshal(p, &pet) == nil && forgotten(pet.ID)
				})
				rec.Body = bytes.NewBuffer(append(mustMarshal(page), '\n'))
				rec.Header().Del("Content-Length")
			}
			copyResponse(w, rec)
		})
	}
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	if string(b) == "null" {
		return []byte("[]")
	}
	return b
}

// trimmedNames stores names without their leading and trailing spaces, and
// answers the create with the name as sent.
func trimmedNames(app http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			app.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m map[string]any
		sent, _ := json.Marshal("")
		if json.Unmarshal(body, &m) == nil {
			if name, ok := m["name"].(string); ok && strings.TrimSpace(name) != name {
				sent, _ = json.Marshal(name)
				m["name"] = strings.TrimSpace(name)
				body, _ = json.Marshal(m)
			}
		}
		setBody(r, body)
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, r)
		if string(sent) != `""` && rec.Code == http.StatusCreated {
			var pet map[string]json.RawMessage
			json.Unmarshal(rec.Body.Bytes(), &pet)
			pet["name"] = sent
			rec.Body = bytes.NewBuffer(mustMarshal(pet))
		}
		copyResponse(w, rec)
	})
}

// dedupeUnkeyed answers a create without a key that repeats an earlier one
// of the same API key, byte for byte, with the earlier answer.
func dedupeUnkeyed(app http.Handler) http.Handler {
	var mu sync.Mutex
	seen := map[string]*httptest.ResponseRecorder{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Idempotency-Key") != "" {
			app.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		setBody(r, body)
		k := r.Header.Get("Authorization") + "\x00" + string(body)
		mu.Lock()
		prev := seen[k]
		mu.Unlock()
		if prev != nil {
			copyResponse(w, prev)
			return
		}
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, r)
		if rec.Code == http.StatusCreated {
			mu.Lock()
			seen[k] = rec
			mu.Unlock()
		}
		copyResponse(w, rec)
	})
}

// refusedKeyKept remembers the key of a refused keyed create and answers
// its next create with another body 422.
func refusedKeyKept(app http.Handler) http.Handler {
	var mu sync.Mutex
	refusedKeys := map[string]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := r.Header.Get("Authorization") + "\x00" + r.Header.Get("Idempotency-Key")
		if r.Method != http.MethodPost || r.Header.Get("Idempotency-Key") == "" {
			app.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		kept := refusedKeys[k]
		mu.Unlock()
		if kept {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, `{"code":"idempotency_key_reused","message":"key used","status":422}`)
			return
		}
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, r)
		if rec.Code == http.StatusBadRequest {
			mu.Lock()
			refusedKeys[k] = true
			mu.Unlock()
		}
		copyResponse(w, rec)
	})
}

// racyKeys looks a key up before its create is stored: a retry that comes
// while the first is in flight does not find it, and creates again. The
// first holds its turn until a retry comes (or 100 ms pass), as a slow
// store would.
func racyKeys(app http.Handler) http.Handler {
	var mu sync.Mutex
	inFlight := map[string]chan struct{}{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		if r.Method != http.MethodPost || key == "" {
			app.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		arrived, busy := inFlight[key]
		if busy {
			delete(inFlight, key)
			close(arrived)
			r.Header.Del("Idempotency-Key")
		} else {
			arrived = make(chan struct{})
			inFlight[key] = arrived
		}
		mu.Unlock()
		if !busy {
			select {
			case <-arrived:
			case <-time.After(100 * time.Millisecond):
				mu.Lock()
				delete(inFlight, key)
				mu.Unlock()
			}
		}
		app.ServeHTTP(w, r)
	})
}
