package conform_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/conform"
	"github.com/petstore/petstore/internal/contract"
)

// The mutants of issue 51, one or more a family of what the kit of
// 95dcf58 let through: near misses of compared values, a form judged on
// one path only, retries that differ in what does not describe the
// animal, promises over time, request forms of HTTP/1.1, values judged
// alone, a verdict that passes what it did not judge, and codes read from
// English. Each passes that kit whole and fails this one
// (.ci/kit-mutants.sh 95dcf58). The family column is the check's; the
// name starts with the family.
var mutants51 = []mutant{
	{name: "near miss: the API key compared in any case", family: "illegal", check: "ignored_auth", wrap: keyAnyCase},
	{name: "near miss: the API key taken from the query string", family: "illegal", check: "ignored_auth", wrap: keyFromQuery},
	{name: "near miss: Idempotency-Keys compared in any case", family: "meaning", check: "idempotent_replay", wrap: rewriteKey(strings.ToLower)},
	{name: "near miss: Idempotency-Keys percent-decoded", family: "illegal", check: "negative_data_rejection", wrap: func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ks := r.Header.Values("Idempotency-Key"); len(ks) == 1 && strings.Contains(ks[0], "%") {
				if d, err := url.PathUnescape(ks[0]); err == nil && quotedKey.MatchString(`"`+d+`"`) {
					r.Header.Set("Idempotency-Key", d)
				}
			}
			app.ServeHTTP(w, r)
		})
	}},
	{name: "near miss: query parameter names in any case", family: "illegal", check: "negative_data_rejection", wrap: func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if q, err := url.ParseQuery(r.URL.RawQuery); err == nil {
				lower := url.Values{}
				for k, vs := range q {
					lower[strings.ToLower(k)] = append(lower[strings.ToLower(k)], vs...)
				}
				r.URL.RawQuery = lower.Encode()
			}
			app.ServeHTTP(w, r)
		})
	}},
	{name: "near miss: an enum value matched by a prefix (avail for available)", family: "illegal", check: "negative_data_rejection", wrap: rewriteQuery(func(q url.Values) {
		for _, v := range []string{"available", "pending", "sold"} {
			if s := q.Get("status"); len(s) > 1 && s != v && strings.HasPrefix(v, s) {
				q.Set("status", v)
			}
		}
	})},
	{name: "near miss: any application/json… media type taken as JSON", family: "illegal", check: "negative_data_rejection", wrap: func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ct := r.Header.Values("Content-Type"); len(ct) == 1 && jsonLike.MatchString(ct[0]) {
				r.Header.Set("Content-Type", "application/json")
			}
			app.ServeHTTP(w, r)
		})
	}},
	{name: "every path: an illegal body under a kept Idempotency-Key replays its answer", family: "illegal", check: "negative_data_rejection", wrap: lookupBeforeValidation},
	{name: "retry headers: the fingerprint reads User-Agent", family: "meaning", check: "idempotent_replay", wrap: keyWithHeader("User-Agent")},
	{name: "retry headers: the fingerprint reads Content-Type as sent", family: "meaning", check: "idempotent_replay", wrap: keyWithHeader("Content-Type")},
	{name: "over time: a request head must arrive within 1 s", family: "legal", check: "http_framing", wrap: func(app http.Handler) http.Handler {
		return serverDefect{Handler: app, headerTimeout: time.Second}
	}},
	{name: "over time: kept outcomes forgotten after 1 s", family: "meaning", check: "idempotent_replay", wrap: forgetKeysAfter(time.Second)},
	{name: "request form: absolute-form targets refused", family: "legal", check: "http_framing", wrap: refuseIf(http.StatusBadRequest, func(r *http.Request) bool {
		return !strings.HasPrefix(r.RequestURI, "/")
	})},
	{name: "integer spelling: white space around integers trimmed", family: "illegal", check: "negative_data_rejection", wrap: rewriteIntegers(func(s string) string { return strings.Trim(s, " \t") })},
	{name: "integer spelling: digits of other scripts read as digits", family: "illegal", check: "negative_data_rejection", wrap: rewriteIntegers(asciiDigits)},
	{name: "relation: RateLimit-Limit below RateLimit-Remaining", family: "headers", check: "header_values", wrap: rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if n, err := strconv.Atoi(h.Get("RateLimit-Remaining")); err == nil && n >= 2 {
			h.Set("RateLimit-Limit", strconv.Itoa(n-1))
		}
		return body
	})},
	{name: "relation: RateLimit-Reset 0 while the quota is not full", family: "headers", check: "header_values", wrap: rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if h.Get("RateLimit-Reset") != "" {
			h.Set("RateLimit-Reset", "0")
		}
		return body
	})},
	{name: "relation: answers in charset=iso-8859-1", family: "form", check: "content_type_conformance", wrap: rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if strings.HasPrefix(h.Get("Content-Type"), "application/json") {
			h.Set("Content-Type", "application/json; charset=iso-8859-1")
		}
		return body
	})},
	{name: "code: 401 answered with code invalid_request, the spec's words reworded", family: "meaning", check: "error_body", wrap: rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		return bytes.Replace(body, []byte(`"code":"unauthorized"`), []byte(`"code":"invalid_request"`), 1)
	})},
	{name: "verdict: the first create refused, refused creates stored", family: "meaning", check: "", wrap: firstRefusedThenStored},
}

// mutantOptions are what some mutants need besides a target: the spec the
// kit holds it to reworded (every description rewritten, the names kept),
// and a verdict in place of a check: "incomplete", for a mutant the kit
// cannot see, and must say so rather than pass.
var mutantOptions = map[string]struct {
	reword  bool
	verdict string
}{
	"code: 401 answered with code invalid_request, the spec's words reworded": {reword: true},
	"verdict: the first create refused, refused creates stored":               {verdict: "incomplete"},
}

// mutantConfig is the kit's configuration against mutant m at base.
func mutantConfig(t *testing.T, m mutant, base string) conform.Config {
	cfg := kitConfig(base)
	if mutantOptions[m.name].reword {
		cfg.Spec = reworded(t)
	}
	return cfg
}

// verdictOf is rep's verdict, or "" from a kit without one (95dcf58).
func verdictOf(rep any) string {
	if v, ok := rep.(interface{ Verdict() string }); ok {
		return v.Verdict()
	}
	return ""
}

// jsonLike is a media type that starts as application/json and goes on.
var jsonLike = regexp.MustCompile(`^(?i)application/json[a-z0-9.+-]+$`)

// keyAnyCase takes a bearer key that is one of the server's but for its
// case as that key.
func keyAnyCase(app http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok {
			for _, k := range []string{testKey, testKey2} {
				if strings.EqualFold(token, k) {
					r.Header.Set("Authorization", scheme+" "+k)
				}
			}
		}
		app.ServeHTTP(w, r)
	})
}

// keyFromQuery takes access_token from the query string as the key when no
// Authorization came.
func keyFromQuery(app http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query(); r.Header.Get("Authorization") == "" && q.Get("access_token") != "" {
			r.Header.Set("Authorization", "Bearer "+q.Get("access_token"))
			q.Del("access_token")
			r.URL.RawQuery = q.Encode()
		}
		app.ServeHTTP(w, r)
	})
}

// lookupBeforeValidation keeps each keyed create's answer, and answers a
// keyed create the app refuses (400, 406, 413) with the answer kept for its
// key, as a server that looks the key up before it validates.
func lookupBeforeValidation(app http.Handler) http.Handler {
	var mu sync.Mutex
	kept := map[string]*httptest.ResponseRecorder{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Authorization") + "\x00" + r.Header.Get("Idempotency-Key")
		if r.Method != http.MethodPost || r.Header.Get("Idempotency-Key") == "" {
			app.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, r)
		mu.Lock()
		prev := kept[key]
		if rec.Code == http.StatusCreated && prev == nil {
			kept[key] = rec
		}
		mu.Unlock()
		if prev != nil && (rec.Code == http.StatusBadRequest || rec.Code == http.StatusNotAcceptable || rec.Code == http.StatusRequestEntityTooLarge) {
			prev.Header().Set("Idempotent-Replayed", "true")
			copyResponse(w, prev)
			return
		}
		copyResponse(w, rec)
	})
}

// rewriteKey changes the one Idempotency-Key of a create with f (the key
// without the quotes of its structured-field form, which stay), before the
// app reads it; a key given twice, or malformed, goes as it came (the app
// refuses it).
func rewriteKey(f func(string) string) func(http.Handler) http.Handler {
	return func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ks := r.Header.Values("Idempotency-Key"); len(ks) == 1 && r.Method == http.MethodPost {
				k := ks[0]
				quoted := quotedKey.MatchString(k)
				bare := strings.Trim(k, `"`)
				if quoted || quotedKey.MatchString(`"`+k+`"`) {
					k = f(bare)
					if quoted {
						k = `"` + k + `"`
					}
					r.Header.Set("Idempotency-Key", k)
				}
			}
			app.ServeHTTP(w, r)
		})
	}
}

// keyWithHeader makes the value of header part of the Idempotency-Key, as a
// server whose fingerprint reads it: a retry that changes it is another
// request.
func keyWithHeader(header string) func(http.Handler) http.Handler {
	return func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hashed := rewriteKey(func(k string) string {
				sum := sha256.Sum256([]byte(k + "\x00" + strings.Join(r.Header.Values(header), ",")))
				return hex.EncodeToString(sum[:16])
			})
			hashed(app).ServeHTTP(w, r)
		})
	}
}

// forgetKeysAfter forgets a key's outcome once ttl has passed since its
// first use: a later create with it is another key's.
func forgetKeysAfter(ttl time.Duration) func(http.Handler) http.Handler {
	return func(app http.Handler) http.Handler {
		var mu sync.Mutex
		first := map[string]time.Time{}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if k := r.Header.Get("Idempotency-Key"); k != "" && r.Method == http.MethodPost {
				mu.Lock()
				at, seen := first[k]
				if !seen {
					first[k] = time.Now()
				}
				mu.Unlock()
				if seen && time.Since(at) > ttl {
					r.Header.Set("Idempotency-Key", "forgotten."+strconv.FormatInt(time.Now().UnixNano(), 36))
				}
			}
			app.ServeHTTP(w, r)
		})
	}
}

// rewriteIntegers changes each integer parameter (in the query and the
// path) with f before the app reads it.
func rewriteIntegers(f func(string) string) func(http.Handler) http.Handler {
	return func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if q, err := url.ParseQuery(r.URL.RawQuery); err == nil {
				for _, name := range []string{"limit", "after"} {
					if vs := q[name]; len(vs) == 1 {
						q.Set(name, f(vs[0]))
					}
				}
				r.URL.RawQuery = q.Encode()
			}
			get := opPath("getPet")
			if prefix := get[:strings.LastIndex(get, "/")+1]; strings.HasPrefix(r.URL.Path, prefix) && len(r.URL.Path) > len(prefix) {
				r.URL.Path, r.URL.RawPath = prefix+f(r.URL.Path[len(prefix):]), ""
			}
			app.ServeHTTP(w, r)
		})
	}
}

// asciiDigits writes each decimal digit of s, of whatever script, as its
// ASCII digit.
func asciiDigits(s string) string {
	return strings.Map(func(c rune) rune {
		if c > 0x7f && unicode.IsDigit(c) {
			return '0' + digitValue(c)
		}
		return c
	}, s)
}

// digitValue is the value of a decimal digit of any script: its offset in
// its block of ten.
func digitValue(c rune) rune {
	for z := c; z >= c-9; z-- {
		if unicode.IsDigit(z) && !unicode.IsDigit(z-1) {
			return c - z
		}
	}
	return 0
}

// firstRefusedThenStored answers the first create 429 for an hour, and
// stores the pet of every create the app refuses 400 (reading the body of
// a valid, keyed request only: the held-back ones are the app's).
func firstRefusedThenStored(app http.Handler) http.Handler {
	var once sync.Once
	create := opPath("createPet")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := false
		if r.Method == http.MethodPost && r.Header.Get("Authorization") != "" {
			once.Do(func() { first = true })
		}
		if first {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"code":"rate_limited","message":"try again in an hour","status":429}`)
			return
		}
		if r.Method != http.MethodPost || r.URL.Path != create || r.Header.Get("Authorization") == "" || r.ContentLength < 0 || r.ContentLength > 1<<20 {
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
				store := httptest.NewRequest(http.MethodPost, create, strings.NewReader(apitest.Body(`{"name":`+strconv.Quote(name)+`,"categoryId":1}`)))
				store.Header.Set("Authorization", r.Header.Get("Authorization"))
				store.Header.Set("Content-Type", "application/json")
				app.ServeHTTP(httptest.NewRecorder(), store)
			}
		}
		copyResponse(w, rec)
	})
}

// opPaths are the paths of the spec's operations as the target serves
// them, base path included, by operation id: read from the embedded spec,
// never written here.
var opPaths = sync.OnceValue(func() map[string]string {
	spec, err := gen.GetSpec()
	if err != nil {
		panic(err)
	}
	base, err := contract.BasePath(spec)
	if err != nil {
		panic(err)
	}
	paths := map[string]string{}
	for path, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			paths[op.OperationID] = base + path
		}
	}
	return paths
})

// opPath is the path of the operation id, base path included.
func opPath(id string) string {
	p, ok := opPaths()[id]
	if !ok {
		panic("no operation " + id + " in the spec")
	}
	return p
}

// reworded is a copy of openapi.yaml with every description and summary
// rewritten: the words change, the names (x-rules, the schemas) do not.
func reworded(t *testing.T) *openapi3.T {
	t.Helper()
	spec := specFile(t)
	words := "Reworded: these words say the same in other words."
	spec.Info.Description = words
	var schema func(s *openapi3.SchemaRef, depth int)
	schema = func(s *openapi3.SchemaRef, depth int) {
		if s == nil || s.Value == nil || depth > 6 {
			return
		}
		s.Value.Description = words
		for _, p := range s.Value.Properties {
			schema(p, depth+1)
		}
		for _, sub := range s.Value.AllOf {
			schema(sub, depth+1)
		}
		schema(s.Value.Items, depth+1)
	}
	for _, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			op.Summary, op.Description = words, words
			for _, p := range op.Parameters {
				p.Value.Description = words
				schema(p.Value.Schema, 0)
			}
			for _, resp := range op.Responses.Map() {
				resp.Value.Description = &words
			}
		}
	}
	for _, s := range spec.Components.Schemas {
		schema(s, 0)
	}
	for _, h := range spec.Components.Headers {
		h.Value.Description = words
	}
	for _, r := range spec.Components.Responses {
		r.Value.Description = &words
	}
	return spec
}
