package conform_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/conform"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/ratelimit"
)

// A mutant is the real app with one defect a rival implementation could
// plausibly have, the family of defect it stands for, and the check of the
// kit that must catch it.
type mutant struct {
	name   string
	family string
	check  string
	wrap   func(app http.Handler) http.Handler
}

// mutants is the table the kit proves itself on: the first ones, then
// those of issue 42, a table a family (mutants42_test.go), then those of
// the sentences that came after (mutants_edges_test.go).
var mutants = slices.Concat(baseMutants, meaningMutants, legalMutants, illegalMutants, tenancyMutants, headerMutants, edgeMutants, mutants51, mutants59)

// baseMutants are the defects the kit caught before it had a model.
var baseMutants = []mutant{
	{"403 for a missing key", "illegal", "ignored_auth", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") == "" {
				writeError(w, http.StatusForbidden, "forbidden")
				return
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"lower-case bearer scheme refused", "legal", "ignored_auth", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.Header.Get("Authorization"), "bearer ") {
				writeError(w, http.StatusUnauthorized, "bad scheme")
				return
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"validation before authentication", "illegal", "auth_before_validation", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") == "" {
				body, _ := io.ReadAll(r.Body)
				probe := r.Clone(r.Context())
				probe.Header.Set("Authorization", "Bearer "+testKey)
				probe.Body = io.NopCloser(bytes.NewReader(body))
				rec := httptest.NewRecorder()
				app.ServeHTTP(rec, probe)
				if rec.Code == http.StatusBadRequest {
					copyResponse(w, rec)
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"limit above its maximum served as 100", "illegal", "negative_data_rejection", rewriteQuery(func(q url.Values) {
		if n, err := strconv.Atoi(q.Get("limit")); err == nil && n > 100 {
			q.Set("limit", "100")
		}
	})},
	{"categoryId 0 taken as 1", "illegal", "negative_data_rejection", rewriteBody(func(m map[string]any) {
		if m["categoryId"] == json.Number("0") {
			m["categoryId"] = 1
		}
	})},
	{"name over 100 characters cut to 100", "illegal", "negative_data_rejection", rewriteBody(func(m map[string]any) {
		if s, ok := m["name"].(string); ok && len([]rune(s)) > 100 {
			m["name"] = string([]rune(s)[:100])
		}
	})},
	{"C1 controls and bidi overrides stripped from names", "illegal", "negative_data_rejection", func(app http.Handler) http.Handler {
		// A rival that sanitises instead of refusing: the characters go,
		// the rest of the body is passed on byte for byte.
		strip := func(r rune) rune {
			if (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
				return -1
			}
			return r
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.Body != nil {
				body, _ := io.ReadAll(r.Body)
				setBody(r, bytes.Map(strip, body))
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"unknown members silently dropped", "illegal", "negative_data_rejection", rewriteBody(func(m map[string]any) {
		for k := range m {
			if k != "name" && k != "categoryId" && k != "status" {
				delete(m, k)
			}
		}
	})},
	{"trailing data after the body ignored", "illegal", "negative_data_rejection", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				dec := json.NewDecoder(r.Body)
				var v json.RawMessage
				if dec.Decode(&v) == nil {
					setBody(r, v)
				}
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"status filter ignored", "meaning", "pagination", rewriteQuery(func(q url.Values) { q.Del("status") })},
	{"null for an empty list", "form", contractSchema, rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if r.Method == http.MethodGet && string(body) == "[]\n" {
			return []byte("null\n")
		}
		return body
	})},
	{"listing wrapped in an envelope", "form", contractSchema, rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if r.Method == http.MethodGet && r.URL.Path == apitest.Path("/pets") && status == http.StatusOK {
			return fmt.Appendf(nil, `{"items":%s}`, body)
		}
		return body
	})},
	// A member more is no defect: response objects are open (TestExtraMemberPasses).
	{"required member missing from Pet", "form", contractSchema, rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if status == http.StatusCreated {
			var m map[string]any
			if json.Unmarshal(body, &m) == nil {
				delete(m, "status")
				body, _ = json.Marshal(m)
			}
		}
		return body
	})},
	{"listing in descending order", "meaning", "ordering", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if r.Method == http.MethodGet && r.URL.Path == apitest.Path("/pets") && status == http.StatusOK {
			var page []json.RawMessage
			json.Unmarshal(body, &page)
			slices.Reverse(page)
			b, _ := json.Marshal(page)
			return b
		}
		return body
	})},
	{"next link repeats the last pet", "meaning", "pagination", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		shiftAfter(h, -1)
		return body
	})},
	{"next link skips a pet", "meaning", "pagination", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		shiftAfter(h, +1)
		return body
	})},
	{"no next link", "meaning", "pagination", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if r.URL.Path == apitest.Path("/pets") {
			h.Del("Link")
		}
		return body
	})},
	{"pages one longer than limit", "meaning", "pagination", rewriteQuery(func(q url.Values) {
		if n, err := strconv.Atoi(q.Get("limit")); err == nil && n < 100 {
			q.Set("limit", strconv.Itoa(n+1))
		}
	})},
	{"no Location on 201", "form", "use_after_create", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		h.Del("Location")
		return body
	})},
	{"create acknowledged, not stored", "meaning", "use_after_create", func(app http.Handler) http.Handler {
		var n int64
		var mu sync.Mutex
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || r.Header.Get("Authorization") == "" {
				app.ServeHTTP(w, r)
				return
			}
			body, _ := io.ReadAll(r.Body)
			var p map[string]any
			if json.Unmarshal(body, &p) != nil || p["name"] == nil {
				setBody(r, body)
				app.ServeHTTP(w, r)
				return
			}
			mu.Lock()
			n++
			id := 1_000_000 + n
			mu.Unlock()
			p["id"] = id
			if p["status"] == nil {
				p["status"] = "available"
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Location", apitest.Path(fmt.Sprintf("/pets/%d", id)))
			w.WriteHeader(http.StatusCreated)
			json.NewEncoder(w).Encode(p)
		})
	}},
	{"default status pending", "meaning", "default_status", rewriteBody(func(m map[string]any) {
		if _, ok := m["status"]; !ok {
			m["status"] = "pending"
		}
	})},
	{"no Deprecation header", "form", "deprecation", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		h.Del("Deprecation")
		return body
	})},
	{"no WWW-Authenticate on 401", "form", "response_headers_conformance", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		h.Del("WWW-Authenticate")
		return body
	})},
	{"405 without Allow", "form", "unsupported_method", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		h.Del("Allow")
		return body
	})},
	{"wrong method answered 404", "illegal", "unsupported_method", rewriteStatus(http.StatusMethodNotAllowed, http.StatusNotFound)},
	{"unknown path answered 401", "illegal", "unknown_path", rewriteStatus(http.StatusNotFound, http.StatusUnauthorized)},
	{"500 on the largest id", "legal", "not_a_server_error", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.String(), "9223372036854775807") {
				writeError(w, http.StatusInternalServerError, "overflow")
				return
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"Error status member always 400", "form", "error_body", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		return bytes.Replace(body, fmt.Appendf(nil, `"status":%d`, status), []byte(`"status":400`), 1)
	})},
	{"errors in plain text", "form", "error_body", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if status >= 400 {
			h.Set("Content-Type", "text/plain; charset=utf-8")
			return []byte(http.StatusText(status))
		}
		return body
	})},
	{"success as text/plain", "form", "content_type_conformance", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if status < 300 {
			h.Set("Content-Type", "text/plain")
		}
		return body
	})},
	// On GET: createPet documents 422 (an Idempotency-Key reused), where
	// negative_data_rejection catches a 422 for an invalid body.
	{"undocumented 422 for invalid queries", "form", "status_code_conformance", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if r.Method == http.MethodGet && status == http.StatusBadRequest {
			return bytes.Replace(body, []byte(`"status":400`), []byte(`"status":422`), 1)
		}
		return body
	}, func(r *http.Request, status int) int {
		if r.Method == http.MethodGet && status == http.StatusBadRequest {
			return http.StatusUnprocessableEntity
		}
		return status
	})},
	{"refused create stored anyway", "meaning", "refused_write", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				app.ServeHTTP(w, r)
				return
			}
			body, _ := io.ReadAll(r.Body)
			setBody(r, body)
			rec := httptest.NewRecorder()
			app.ServeHTTP(rec, r)
			var m map[string]any
			if rec.Code == http.StatusBadRequest && json.Unmarshal(body, &m) == nil {
				if name, ok := m["name"].(string); ok {
					store := httptest.NewRequest(http.MethodPost, apitest.Path("/pets"), strings.NewReader(apitest.Body(fmt.Sprintf(`{"name":%q,"categoryId":1}`, name))))
					store.Header.Set("Authorization", "Bearer "+testKey)
					store.Header.Set("Content-Type", "application/json")
					app.ServeHTTP(httptest.NewRecorder(), store)
				}
			}
			copyResponse(w, rec)
		})
	}},
	{"id in the body honoured", "illegal", "negative_data_rejection", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var id any
			strip := rewriteBody(func(m map[string]any) { id = m["id"]; delete(m, "id") })
			honour := rewriteResponse(func(_ *http.Request, status int, h http.Header, body []byte) []byte {
				if status != http.StatusCreated || id == nil {
					return body
				}
				var p map[string]any
				json.Unmarshal(body, &p)
				p["id"] = id
				h.Set("Location", apitest.Path(fmt.Sprintf("/pets/%v", id)))
				b, _ := json.Marshal(p)
				return b
			})
			strip(honour(app)).ServeHTTP(w, r)
		})
	}},
	{"ids reused under load", "tenancy", "unique_ids", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if status != http.StatusCreated {
			return body
		}
		var p map[string]any
		json.Unmarshal(body, &p)
		id, _ := p["id"].(float64)
		p["id"] = int64(id+1) / 2
		b, _ := json.Marshal(p)
		return b
	})},
	{"any Idempotency-Key syntax accepted", "illegal", "negative_data_rejection", func(app http.Handler) http.Handler {
		// A rival that takes whatever the header holds (too long, any
		// character, given twice, empty) as the key: the app sees it as a
		// digest, which its syntax allows.
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if keys, ok := r.Header["Idempotency-Key"]; ok {
				sum := sha256.Sum256([]byte(strings.Join(keys, "\n")))
				r.Header.Set("Idempotency-Key", hex.EncodeToString(sum[:]))
			}
			app.ServeHTTP(w, r)
		})
	}},
	{"Idempotency-Key ignored", "meaning", "idempotent_replay", func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Del("Idempotency-Key")
			app.ServeHTTP(w, r)
		})
	}},
	{"replay not marked", "meaning", "idempotent_replay", rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		h.Del("Idempotent-Replayed")
		return body
	})},
}

const contractSchema = "response_schema_conformance"

// TestMutantEvidence prints, for each mutant, the checks the kit fails
// against it, and never fails itself: .ci/kit-mutants.sh runs it on this
// tree and on an older one (the same mutants, the older kit) to show which
// mutants only the newer kit catches.
func TestMutantEvidence(t *testing.T) {
	if os.Getenv("CONFORM_MUTANT_EVIDENCE") == "" {
		t.Skip("set CONFORM_MUTANT_EVIDENCE=1 (.ci/kit-mutants.sh does)")
	}
	for _, m := range mutants {
		rep, err := conform.Run(context.Background(), mutantConfig(t, m, serveMutant(t, m.wrap)))
		var failed []string
		verdict := ""
		if err == nil {
			for _, c := range conform.Checks {
				if rep.Failed(c.Name) {
					failed = append(failed, c.Name)
				}
			}
			verdict = verdictOf(rep)
		}
		fmt.Printf("MUTANT\t%s\t%s\t%s\t%s\t%v\t%s\n", m.name, m.family, m.check, strings.Join(failed, ","), err, verdict)
	}
}

// testKey2 is the second tenant's key of the mutants' server.
const testKey2 = "conform-test-key2-0123456789"

// serveMutant starts the real app over a memory store on loopback, taking
// testKey and testKey2, with wrap around it. Rate limiting is on, with a
// bucket the kit never empties (100 000) that refills slower than the kit
// sends (100 a second), so that every answer carries the RateLimit fields
// whose relations the kit judges, the quota not full.
func serveMutant(t *testing.T, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	limit, err := ratelimit.Parse("100/s,burst=100000")
	if err != nil {
		t.Fatal(err)
	}
	app, err := httpapi.New(httpapi.Config{Store: memstore.New(), Keys: apikey.NewSet(apikey.Hash(testKey), apikey.Hash(testKey2)), RateLimit: ratelimit.New(limit, nil)})
	if err != nil {
		t.Fatal(err)
	}
	return listen(t, wrap(app)).URL + apitest.Base()
}

// ---- mutation helpers

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"code":"internal","message":%q,"status":%d}`, msg, status)
}

func copyResponse(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

func setBody(r *http.Request, b []byte) {
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
}

// rewriteQuery changes the query before the app sees it.
func rewriteQuery(f func(url.Values)) func(http.Handler) http.Handler {
	return func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				if q, err := url.ParseQuery(r.URL.RawQuery); err == nil {
					f(q)
					r.URL.RawQuery = q.Encode()
				}
			}
			app.ServeHTTP(w, r)
		})
	}
}

// rewriteBody changes a create's JSON object before the app sees it.
func rewriteBody(f func(map[string]any)) func(http.Handler) http.Handler {
	return func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.Body != nil {
				body, _ := io.ReadAll(r.Body)
				var m map[string]any
				dec := json.NewDecoder(bytes.NewReader(body))
				dec.UseNumber()
				if dec.Decode(&m) == nil && m != nil && !dec.More() {
					f(m)
					body, _ = json.Marshal(m)
				}
				setBody(r, body)
			}
			app.ServeHTTP(w, r)
		})
	}
}

// rewriteResponse changes the app's answer: its headers in place, its body
// by return, its status by the optional second function.
func rewriteResponse(f func(r *http.Request, status int, h http.Header, body []byte) []byte, st ...func(*http.Request, int) int) func(http.Handler) http.Handler {
	return func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			app.ServeHTTP(rec, r)
			body := f(r, rec.Code, rec.Header(), rec.Body.Bytes())
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			status := rec.Code
			for _, s := range st {
				status = s(r, status)
			}
			w.WriteHeader(status)
			w.Write(body)
		})
	}
}

func rewriteStatus(from, to int) func(http.Handler) http.Handler {
	return rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if status == from {
			return bytes.Replace(body, fmt.Appendf(nil, `"status":%d`, from), fmt.Appendf(nil, `"status":%d`, to), 1)
		}
		return body
	}, func(r *http.Request, status int) int {
		if status == from {
			return to
		}
		return status
	})
}

var afterRE = regexp.MustCompile(`after=(\d+)`)

// shiftAfter moves the cursor of a next link by d.
func shiftAfter(h http.Header, d int64) {
	link := h.Get("Link")
	if !strings.Contains(link, `rel="next"`) {
		return
	}
	h.Set("Link", afterRE.ReplaceAllStringFunc(link, func(m string) string {
		n, _ := strconv.ParseInt(m[len("after="):], 10, 64)
		return "after=" + strconv.FormatInt(n+d, 10)
	}))
}
