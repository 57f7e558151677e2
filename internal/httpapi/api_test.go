package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/schemagen/schematest"
)

const testKey = "test-key-0123456789abcdef0123456789"

// newClient builds the full app (validator, authentication, error mapper)
// over store and returns a contract-checking client that sends testKey.
func newClient(t *testing.T, store pets.Store) *apitest.Client {
	t.Helper()
	app, err := httpapi.New(httpapi.Config{Store: store, Keys: apikey.NewSet(apikey.Hash(testKey), apikey.Hash(otherKey))}) // otherKey: ratelimit_test.go
	if err != nil {
		t.Fatalf("httpapi.New: %v", err)
	}
	return &apitest.Client{Contract: apitest.Load(t), Handler: app, Key: testKey}
}

func TestAPI(t *testing.T) {
	RunAPISuite(t, func(*testing.T) pets.Store { return memstore.New() })
}

// RunAPISuite runs every HTTP behaviour test over stores from newStore, which
// must return an empty store each time.
func RunAPISuite(t *testing.T, newStore func(*testing.T) pets.Store) {
	for _, tc := range []struct {
		name string
		test func(*testing.T, *apitest.Client)
	}{
		{"Authentication", testAuthentication},
		{"ListEmpty", testListEmpty},
		{"ListPaging", testListPaging},
		{"ListBadQuery", testListBadQuery},
		{"CreateAndGet", testCreateAndGet},
		{"CreateBadBody", testCreateBadBody},
		{"GetErrors", testGetErrors},
		{"Int64Edges", testInt64Edges},
		{"ContentTypes", testContentTypes},
		{"Protocol", testProtocol},
		{"ConcurrentCreates", testConcurrentCreates},
		{"IdempotentCreate", testIdempotentCreate},
		{"IdempotentConcurrent", testIdempotentConcurrent},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, newClient(t, newStore(t))) })
	}
}

func wantError(t *testing.T, res apitest.Response, status int, code gen.ErrorCode, msg string) {
	t.Helper()
	if res.Status != status {
		t.Fatalf("got status %d (%s), want %d", res.Status, res.Body, status)
	}
	e := res.Error(t)
	if e.Code != code {
		t.Errorf("got code %q, want %q (message %q)", e.Code, code, e.Message)
	}
	if !strings.Contains(e.Message, msg) {
		t.Errorf("got message %q, want it to contain %q", e.Message, msg)
	}
}

func testAuthentication(t *testing.T, c *apitest.Client) {
	p := c.Create(t, apitest.Body(`{"name":"Rex","categoryId":1}`))
	anon := *c
	anon.Key = ""
	const (
		plain   = `Bearer realm="petstore"`
		invalid = `Bearer realm="petstore", error="invalid_token"`
	)
	big := `{"name":"` + strings.Repeat("a", 2<<20) + `","categoryId":1}`
	for _, tc := range []struct {
		name, method, path, body string
		header                   []string
		wantStatus               int
		wantAuth                 string
	}{
		{"no header", "GET", apitest.Path("/pets"), "", nil, 401, plain},
		{"no header on create", "POST", apitest.Path("/pets"), apitest.Body(`{"name":"x","categoryId":1}`), nil, 401, plain},
		{"no header on get", "GET", apitest.Path("/pets/") + strconv.FormatInt(p.Id, 10), "", nil, 401, plain},
		{"basic scheme", "GET", apitest.Path("/pets"), "", []string{"Authorization", "Basic dXNlcjpwYXNz"}, 401, plain},
		{"empty bearer", "GET", apitest.Path("/pets"), "", []string{"Authorization", "Bearer "}, 401, invalid},
		{"wrong key", "GET", apitest.Path("/pets"), "", []string{"Authorization", "Bearer test-key-0123456789abcdef012345678X"}, 401, invalid},
		{"key with trailing junk", "GET", apitest.Path("/pets"), "", []string{"Authorization", "Bearer " + testKey + " x"}, 401, invalid},
		{"two headers", "GET", apitest.Path("/pets"), "", []string{"Authorization", "Bearer " + testKey, "Authorization", "Bearer " + testKey}, 401, invalid},
		{"huge header", "GET", apitest.Path("/pets"), "", []string{"Authorization", "Bearer " + strings.Repeat("k", 10000)}, 401, invalid},
		// Authentication is decided before any validation.
		{"no key, bad limit", "GET", apitest.Path("/pets?limit=0"), "", nil, 401, plain},
		{"no key, unknown param", "GET", apitest.Path("/pets?bogus=1"), "", nil, 401, plain},
		{"no key, bad body", "POST", apitest.Path("/pets"), `{"id":1}`, nil, 401, plain},
		{"no key, no content type", "POST", apitest.Path("/pets"), `{}`, []string{"Content-Type", ""}, 401, plain},
		{"no key, 2 MiB body", "POST", apitest.Path("/pets"), big, nil, 401, plain},
		{"no key, bad id", "GET", apitest.Path("/pets/abc"), "", nil, 401, plain},
		{"wrong key, bad body", "POST", apitest.Path("/pets"), `nope`, []string{"Authorization", "Bearer wrong-key-0123456789"}, 401, invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := anon.Do(t, tc.method, tc.path, tc.body, tc.header...)
			wantError(t, res, http.StatusUnauthorized, gen.ErrorCodeUnauthorized, "API key")
			if got := res.Header.Get("WWW-Authenticate"); got != tc.wantAuth {
				t.Errorf("WWW-Authenticate: got %q, want %q", got, tc.wantAuth)
			}
		})
	}
	for _, scheme := range []string{"Bearer", "bearer", "BEARER"} {
		res := anon.Do(t, "GET", apitest.Path("/pets"), "", "Authorization", scheme+" "+testKey)
		if res.Status != http.StatusOK {
			t.Errorf("scheme %q: got %d %s, want 200", scheme, res.Status, res.Body)
		}
	}
}

func testListEmpty(t *testing.T, c *apitest.Client) {
	for _, path := range []string{apitest.Path("/pets"), apitest.Path("/pets?status=sold"), apitest.Path("/pets?after=5")} {
		res := c.Do(t, "GET", path, "")
		if res.Status != http.StatusOK || strings.TrimSpace(string(res.Body)) != "[]" {
			t.Errorf("GET %s on an empty store: got %d %q, want 200 []", path, res.Status, res.Body)
		}
		if link := res.Header.Get("Link"); link != "" {
			t.Errorf("GET %s on an empty store: got Link %q, want none", path, link)
		}
	}
}

// walk follows rel="next" links from path and returns every pet seen.
func walk(t *testing.T, c *apitest.Client, path string) (all []gen.Pet, pages int) {
	t.Helper()
	for path != "" {
		res := c.Do(t, "GET", path, "")
		if res.Status != http.StatusOK {
			t.Fatalf("GET %s: got %d %s", path, res.Status, res.Body)
		}
		var page []gen.Pet
		res.JSON(t, &page)
		all = append(all, page...)
		pages++
		path = res.Next(t)
	}
	return all, pages
}

func testListPaging(t *testing.T, c *apitest.Client) {
	statuses := []string{"available", "pending", "sold"}
	var created []gen.Pet
	for i := range 45 {
		created = append(created, c.Create(t, fmt.Sprintf(`{"name":"pet %d","categoryId":%d,"status":%q}`, i, i+1, statuses[i%3])))
	}

	res := c.Do(t, "GET", apitest.Path("/pets"), "")
	var first []gen.Pet
	res.JSON(t, &first)
	if len(first) != pets.DefaultLimit {
		t.Fatalf("GET /pets: got %d pets, want the default limit %d", len(first), pets.DefaultLimit)
	}
	wantLink := fmt.Sprintf(`<`+apitest.Base()+`/pets?after=%d&limit=20>; rel="next"`, first[19].Id)
	if got := res.Header.Get("Link"); got != wantLink {
		t.Fatalf("GET /pets: got Link %q, want %q", got, wantLink)
	}

	all, pages := walk(t, c, apitest.Path("/pets?limit=10"))
	if len(all) != len(created) || pages != 5 {
		t.Fatalf("walk limit 10: got %d pets in %d pages, want %d in 5", len(all), pages, len(created))
	}
	for i := range all {
		if all[i] != created[i] {
			t.Fatalf("walk limit 10: pet %d is %+v, want %+v", i, all[i], created[i])
		}
	}

	sold, _ := walk(t, c, apitest.Path("/pets?status=sold&limit=4"))
	if len(sold) != 15 {
		t.Fatalf("walk status=sold: got %d pets, want 15", len(sold))
	}
	for i, p := range sold {
		if p.Status != gen.Sold || (i > 0 && p.Id <= sold[i-1].Id) {
			t.Fatalf("walk status=sold: pet %d is %+v: want sold, ascending ids", i, p)
		}
	}

	res = c.Do(t, "GET", apitest.Path(fmt.Sprintf("/pets?limit=100&after=%d", created[40].Id)), "")
	var tail []gen.Pet
	res.JSON(t, &tail)
	if len(tail) != 4 || tail[0] != created[41] || res.Header.Get("Link") != "" {
		t.Fatalf("after %d: got %+v Link %q; want the last 4 pets, no Link", created[40].Id, tail, res.Header.Get("Link"))
	}
}

func testListBadQuery(t *testing.T, c *apitest.Client) {
	for _, tc := range []struct{ query, msg string }{
		{"limit=0", "limit: number must be at least 1"},
		{"limit=101", "limit: number must be at most 100"},
		{"limit=-5", "limit: number must be at least 1"},
		{"limit=abc", "limit: must be a base-10 integer"},
		{"limit=1.5", "limit: must be a base-10 integer"},
		{"limit=99999999999", "limit: number must be at most 100"},
		{"limit=", "limit:"},
		{"status=lost", "status: value is not one of the allowed values"},
		{"status=AVAILABLE", "status: value is not one of the allowed values"},
		{"status=", "status:"},
		{"after=-1", "after: number must be at least 0"},
		{"after=x", "after: must be a base-10 integer"},
		{"after=9223372036854775808", "after: number must be at most 9223372036854775807"},
		{"limt=5", `"limt": unknown query parameter`},
		{"limit=5&limit=6", "limit: must be given once"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			wantError(t, c.Do(t, "GET", apitest.Path("/pets?")+tc.query, ""), http.StatusBadRequest, gen.ErrorCodeInvalidRequest, tc.msg)
		})
	}
	wantError(t, c.Do(t, "GET", apitest.Path("/pets"), `{"a":1}`), http.StatusBadRequest, gen.ErrorCodeInvalidRequest, "takes no request body")
}

func testCreateAndGet(t *testing.T, c *apitest.Client) {
	res := c.Do(t, "POST", apitest.Path("/pets"), apitest.Body(`{"name":"Rex","categoryId":9223372036854775807,"status":"pending"}`))
	if res.Status != http.StatusCreated {
		t.Fatalf("create: got %d %s, want 201", res.Status, res.Body)
	}
	var p gen.Pet
	res.JSON(t, &p)
	want := gen.Pet{Id: p.Id, Name: "Rex", CategoryId: 9223372036854775807, Status: gen.Pending}
	if p != want || p.Id < 1 {
		t.Fatalf("create: got %+v, want %+v with an id >= 1", p, want)
	}
	if got, want := res.Header.Get("Location"), apitest.Path("/pets/")+strconv.FormatInt(p.Id, 10); got != want {
		t.Errorf("Location: got %q, want %q", got, want)
	}

	dflt := c.Create(t, apitest.Body(`{"categoryId":2,"name":"Tom — 🐈"}`))
	if dflt.Status != gen.Available || dflt.Name != "Tom — 🐈" || dflt.Id <= p.Id {
		t.Fatalf("create without status: got %+v, want available, same name, a larger id", dflt)
	}
	c.Create(t, `{"name":"`+strings.Repeat("é", 100)+`","categoryId":1}`)
	c.Create(t, "{\"name\":\"Spot\",\"categoryId\":1}\n")
	c.Create(t, apitest.Body(`{"name":"Chunked","categoryId":1}`))
	res = c.Do(t, "POST", apitest.Path("/pets"), apitest.Body(`{"name":"Charset","categoryId":1}`), "Content-Type", "application/json; charset=utf-8")
	if res.Status != http.StatusCreated {
		t.Fatalf("create with charset: got %d %s", res.Status, res.Body)
	}

	for _, got := range []gen.Pet{p, dflt} {
		res = c.Do(t, "GET", apitest.Path("/pets/")+strconv.FormatInt(got.Id, 10), "")
		var back gen.Pet
		res.JSON(t, &back)
		if res.Status != http.StatusOK || back != got {
			t.Fatalf("get %d: got %d %+v, want 200 %+v", got.Id, res.Status, back, got)
		}
		checkDeprecation(t, res)
	}
}

func checkDeprecation(t *testing.T, res apitest.Response) {
	t.Helper()
	for name, want := range map[string]string{
		"Deprecation": "@1767225600",
		"Sunset":      "Thu, 05 Dec 2030 00:00:00 GMT",
		"Link":        `<` + apitest.Base() + `/pets>; rel="successor-version"`,
	} {
		if got := res.Header.Get(name); got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
}

func testCreateBadBody(t *testing.T, c *apitest.Client) {
	long := strings.Repeat("a", 101)
	unknown := strconv.Quote(schematest.Name("color")) // never a member of the spec's
	for _, tc := range []struct {
		name, body string
		header     []string
		status     int
		msg        string
	}{
		{"missing name", `{"categoryId":1}`, nil, 400, "name: is required"},
		{"missing categoryId", `{"name":"Rex"}`, nil, 400, "categoryId: is required"},
		{"empty object", `{}`, nil, 400, ": is required"},
		{"empty name", `{"name":"","categoryId":1}`, nil, 400, "name: minimum string length is 1"},
		{"blank name", `{"name":"   ","categoryId":1}`, nil, 400, "name: must not contain control characters or explicit bidirectional formatting characters, and must not be only white space"},
		{"long name", `{"name":"` + long + `","categoryId":1}`, nil, 400, "name: maximum string length is 100"},
		{"nul in name", `{"name":"a\u0000b","categoryId":1}`, nil, 400, "name: must not contain control characters"},
		{"newline in name", `{"name":"a\nb","categoryId":1}`, nil, 400, "name: must not contain control characters"},
		{"null name", `{"name":null,"categoryId":1}`, nil, 400, "name:"},
		{"number name", `{"name":5,"categoryId":1}`, nil, 400, "name: value must be a string"},
		{"zero category", `{"name":"Rex","categoryId":0}`, nil, 400, "categoryId: number must be at least 1"},
		{"negative category", `{"name":"Rex","categoryId":-3}`, nil, 400, "categoryId: number must be at least 1"},
		{"string category", `{"name":"Rex","categoryId":"1"}`, nil, 400, "categoryId: value must be an integer"},
		{"fractional category", `{"name":"Rex","categoryId":1.5}`, nil, 400, "categoryId: value must be an integer"},
		{"int64 overflow", `{"name":"Rex","categoryId":9223372036854775808}`, nil, 400, "categoryId"},
		{"huge number", `{"name":"Rex","categoryId":1e400}`, nil, 400, "categoryId"},
		{"bad status", `{"name":"Rex","categoryId":1,"status":"lost"}`, nil, 400, "status: value is not one of the allowed values"},
		{"null status", `{"name":"Rex","categoryId":1,"status":null}`, nil, 400, "status"},
		{"id given", `{"id":7,"name":"Rex","categoryId":1}`, nil, 400, `property "id" is unsupported`},
		{"unknown member", `{"name":"Rex","categoryId":1,` + unknown + `:"red"}`, nil, 400, `property ` + unknown + ` is unsupported`},
		{"case-folded member", `{"NAME":"Rex","categoryId":1}`, nil, 400, "NAME"},
		{"array body", `[{"name":"Rex","categoryId":1}]`, nil, 400, "body: value must be an object"},
		{"string body", `"Rex"`, nil, 400, "body: value must be an object"},
		{"null body", `null`, nil, 400, "body"},
		{"malformed", `{"name":"Rex",`, nil, 400, "body: invalid JSON"},
		{"trailing data", `{"name":"Rex","categoryId":1} {}`, nil, 400, "body: invalid JSON: trailing data"},
		{"duplicate member", `{"name":"Rex","name":"Max","categoryId":1}`, nil, 400, "body: invalid JSON: duplicate"},
		{"invalid UTF-8", "{\"name\":\"R\xffx\",\"categoryId\":1}", nil, 400, "body: invalid JSON: invalid UTF-8"},
		{"no body", ``, nil, 400, "body: a JSON object is required"},
		{"no content type", `{"name":"Rex","categoryId":1}`, []string{"Content-Type", ""}, 400, "Content-Type: must be application/json"},
		{"text/plain", `{"name":"Rex","categoryId":1}`, []string{"Content-Type", "text/plain"}, 400, "Content-Type: must be application/json"},
		{"json-patch", `{"name":"Rex","categoryId":1}`, []string{"Content-Type", "application/merge-patch+json"}, 400, "Content-Type: must be application/json"},
		{"query given", `{"name":"Rex","categoryId":1}`, nil, 400, ""},
		{"2 MiB body", `{"name":"` + strings.Repeat("a", 2<<20) + `","categoryId":1}`, nil, 413, "larger than 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := apitest.Path("/pets")
			if tc.name == "query given" {
				path += "?dryRun=true"
			}
			code := gen.ErrorCodeInvalidRequest
			if tc.status == 413 {
				code = gen.ErrorCodePayloadTooLarge
			}
			body := tc.body
			switch {
			case strings.HasPrefix(tc.name, "missing "): // lacks that member alone
				body = apitest.Without(body, strings.TrimPrefix(tc.name, "missing "))
			case tc.name != "empty object": // the members the spec requires beside those the case is about
				body = apitest.Body(body)
			}
			wantError(t, c.Do(t, "POST", path, body, tc.header...), tc.status, code, tc.msg)
		})
	}
	// Nothing refused was written.
	res := c.Do(t, "GET", apitest.Path("/pets"), "")
	if strings.TrimSpace(string(res.Body)) != "[]" {
		t.Fatalf("after refused creates: GET /pets got %s, want []", res.Body)
	}
}

func testGetErrors(t *testing.T, c *apitest.Client) {
	p := c.Create(t, apitest.Body(`{"name":"Rex","categoryId":1}`))
	res := c.Do(t, "GET", apitest.Path("/pets/")+strconv.FormatInt(p.Id+1000, 10), "")
	wantError(t, res, http.StatusNotFound, gen.ErrorCodeNotFound, "not found")
	checkDeprecation(t, res)
	for _, tc := range []struct{ path, msg string }{
		{apitest.Path("/pets/abc"), "petId: must be a base-10 integer"},
		{apitest.Path("/pets/0"), "petId: number must be at least 1"},
		{apitest.Path("/pets/-1"), "petId: number must be at least 1"},
		{apitest.Path("/pets/1.0"), "petId: must be a base-10 integer"},
		{apitest.Path("/pets/99999999999999999999"), "petId: number must be at most 9223372036854775807"},
		{apitest.Path("/pets/%2e%2e"), "petId: must be a base-10 integer"},
		{apitest.Path("/pets/1?verbose=1"), `"verbose": unknown query parameter`},
	} {
		t.Run(tc.path, func(t *testing.T) {
			wantError(t, c.Do(t, "GET", tc.path, ""), http.StatusBadRequest, gen.ErrorCodeInvalidRequest, tc.msg)
		})
	}
}

// protocolCase is a request to a path or method no operation serves.
type protocolCase struct {
	method, path string
	status       int
	code         gen.ErrorCode
	allow        string
}

// unsupportedMethods are 405 cases from the spec: every method in the
// list but those of the path's operations, on each of its paths, answered
// with the path's methods in Allow. An operation added to the spec moves
// its method from these cases to its own.
func unsupportedMethods() []protocolCase {
	var out []protocolCase
	for _, op := range apitest.Operations() {
		allow := apitest.Methods(op.Path)
		if allow[0] != op.Method { // each path once
			continue
		}
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PROPFIND"} {
			if !slices.Contains(allow, m) {
				out = append(out, protocolCase{m, op.Target("1"), 405, gen.ErrorCodeMethodNotAllowed, strings.Join(allow, ", ")})
			}
		}
	}
	return out
}

func testProtocol(t *testing.T, c *apitest.Client) {
	for _, tc := range append([]protocolCase{
		{"GET", apitest.Path("/orders"), 404, gen.ErrorCodeNotFound, ""},
		{"GET", apitest.Path("/store/orders"), 404, gen.ErrorCodeNotFound, ""},
		{"GET", "/v0/pets", 404, gen.ErrorCodeNotFound, ""}, // a major that never is
		{"GET", "/pets", 404, gen.ErrorCodeNotFound, ""},
		{"GET", apitest.Path("/pets/"), 404, gen.ErrorCodeNotFound, ""},
		{"GET", "/" + apitest.Base() + "/pets", 404, gen.ErrorCodeNotFound, ""},
		{"GET", apitest.Path("/pets/1/owner"), 404, gen.ErrorCodeNotFound, ""},
	}, unsupportedMethods()...) {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			res := c.Do(t, tc.method, tc.path, "")
			wantError(t, res, tc.status, tc.code, "")
			if got := res.Header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow: got %q, want %q", got, tc.allow)
			}
		})
	}
	res := c.Do(t, "GET", "/healthz", "", "Authorization", "")
	if res.Status != http.StatusOK {
		t.Errorf("GET /healthz without a key: got %d, want 200", res.Status)
	}
	if id := res.Header.Get("X-Request-Id"); len(id) < 16 {
		t.Errorf("X-Request-Id: got %q, want a generated id", id)
	}
	res = c.Do(t, "GET", "/healthz", "", "X-Request-Id", "client-id-42")
	if id := res.Header.Get("X-Request-Id"); id != "client-id-42" {
		t.Errorf("X-Request-Id: got %q, want the client's client-id-42", id)
	}
	res = c.Do(t, "GET", "/healthz", "", "X-Request-Id", "bad id\twith tabs")
	if id := res.Header.Get("X-Request-Id"); id == "" || strings.ContainsAny(id, " \t") {
		t.Errorf("X-Request-Id: got %q, want a fresh id in place of a bad one", id)
	}
}

func testConcurrentCreates(t *testing.T, c *apitest.Client) {
	const workers, each = 8, 25
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		got = map[int64]gen.Pet{}
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				p := c.Create(t, fmt.Sprintf(`{"name":"w%d-%d","categoryId":%d}`, w, i, w+1))
				mu.Lock()
				if _, dup := got[p.Id]; dup {
					t.Errorf("id %d acknowledged twice", p.Id)
				}
				got[p.Id] = p
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	all, _ := walk(t, c, apitest.Path("/pets?limit=100"))
	if len(all) != workers*each || len(got) != workers*each {
		t.Fatalf("got %d listed, %d acknowledged; want %d each", len(all), len(got), workers*each)
	}
	for _, p := range all {
		if got[p.Id] != p {
			t.Fatalf("listed %+v, acknowledged %+v", p, got[p.Id])
		}
	}
}

// failingStore fails every call it writes out with err, or panics when
// err is nil. pets.Store, nil, is embedded so that a method added to the
// interface needs no edit here: a call to it panics.
type failingStore struct {
	pets.Store
	err error
}

func (s failingStore) Create(context.Context, pets.NewPet) (pets.Pet, error) { return s.fail() }
func (s failingStore) CreateOnce(context.Context, pets.NewPet, pets.IdempotencyKey) (pets.Pet, bool, error) {
	p, err := s.fail()
	return p, false, err
}
func (s failingStore) Get(context.Context, int64) (pets.Pet, error) { return s.fail() }
func (s failingStore) List(context.Context, pets.Query) (pets.Page, error) {
	_, err := s.fail()
	return pets.Page{}, err
}
func (s failingStore) fail() (pets.Pet, error) {
	if s.err == nil {
		panic("store exploded")
	}
	return pets.Pet{}, s.err
}

func TestStoreFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
		code   gen.ErrorCode
	}{
		{"panic", nil, 500, gen.ErrorCodeInternal},
		{"unexpected error", errors.New("disk on fire: secret detail"), 500, gen.ErrorCodeInternal},
		{"unavailable", fmt.Errorf("dial: %w", pets.ErrUnavailable), 503, gen.ErrorCodeUnavailable},
		{"deadline", context.DeadlineExceeded, 503, gen.ErrorCodeUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, failingStore{err: tc.err})
			for _, r := range [][3]string{{"GET", apitest.Path("/pets"), ""}, {"POST", apitest.Path("/pets"), apitest.Body(`{"name":"Rex","categoryId":1}`)}, {"GET", apitest.Path("/pets/1"), ""}} {
				res := c.Do(t, r[0], r[1], r[2])
				wantError(t, res, tc.status, tc.code, "")
				if strings.Contains(string(res.Body), "secret") || strings.Contains(string(res.Body), "exploded") {
					t.Errorf("%s %s: body %s leaks the internal error", r[0], r[1], res.Body)
				}
			}
		})
	}
}
