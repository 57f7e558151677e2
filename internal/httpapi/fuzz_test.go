package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
)

// The fuzz tests send each input through the full app (validator,
// authentication, handlers, error mapper) and require: no 5xx, no panic, an
// answer openapi.yaml documents, and, for creation, nothing written unless
// the answer is 201. A request that net/http itself would refuse (a request
// line or header it cannot parse) never reaches the app and is skipped.

// resettable is a pets.Store whose contents a fuzz test can drop between
// inputs, so that each input starts from a known store. The store is
// embedded: every method of pets.Store, one added with an operation
// included, reaches it. A fuzz function runs one input at a time, the app
// in its goroutine (apitest.Client), so reset races with no call.
type resettable struct{ pets.Store }

func (r *resettable) reset() { r.Store = memstore.New() }

// fuzzTarget is the app under fuzzing with its store and contract.
type fuzzTarget struct {
	app      http.Handler
	store    *resettable
	contract *apitest.Contract
}

func newFuzzTarget(f *testing.F) *fuzzTarget {
	f.Helper()
	store := &resettable{memstore.New()}
	app, err := httpapi.New(httpapi.Config{Store: store, Keys: apikey.NewSet(apikey.Hash(testKey))})
	if err != nil {
		f.Fatalf("httpapi.New: %v", err)
	}
	return &fuzzTarget{app: app, store: store, contract: apitest.Load(f)}
}

// seed fills the store with n pets of every status.
func (ft *fuzzTarget) seed(f *testing.F, n int) {
	f.Helper()
	for i := range n {
		if _, err := ft.store.Create(context.Background(), pets.NewPet{Name: "pet " + strconv.Itoa(i), CategoryID: int64(i + 1), Status: pets.Statuses[i%3], Extra: pets.Extra(apitest.Extra())}); err != nil {
			f.Fatal(err)
		}
	}
}

// send parses the raw request as net/http's server would and serves it. It
// reports false when the server would have refused the request itself.
func (ft *fuzzTarget) send(t *testing.T, raw string) (apitest.Response, bool) {
	t.Helper()
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		return apitest.Response{}, false
	}
	rec := httptest.NewRecorder()
	ft.app.ServeHTTP(rec, req)
	res := apitest.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	if res.Status >= 500 {
		t.Fatalf("%s %q: got %d %s; want no 5xx", req.Method, req.RequestURI, res.Status, res.Body)
	}
	ft.contract.Check(t, req, res.Status, res.Header, res.Body)
	return res, true
}

// get returns the raw GET of target with the test key.
func get(target string) string {
	return "GET " + target + " HTTP/1.1\r\nHost: petstore.test\r\nAuthorization: Bearer " + testKey + "\r\n\r\n"
}

// hostileSeeds returns the bodies and content types, the queries and the
// pet path segments of the hostile-request table, for the fuzzers' corpus.
func hostileSeeds() (bodies [][2]string, queries, segments []string) {
	for _, r := range hostileRequests() {
		switch {
		case r.method == "POST" && r.path == apitest.Path("/pets") && len(r.body) <= 64<<10:
			ct := "application/json"
			if len(r.header) == 2 && r.header[0] == "Content-Type" {
				ct = r.header[1]
			}
			bodies = append(bodies, [2]string{r.body, ct})
		case r.method == "GET" && strings.HasPrefix(r.path, apitest.Path("/pets?")):
			queries = append(queries, strings.TrimPrefix(r.path, apitest.Path("/pets?")))
		case r.method == "GET" && strings.HasPrefix(r.path, apitest.Path("/pets/")):
			segments = append(segments, strings.TrimPrefix(r.path, apitest.Path("/pets/")))
		}
	}
	return bodies, queries, segments
}

func FuzzCreatePet(f *testing.F) {
	ft := newFuzzTarget(f)
	bodies, _, _ := hostileSeeds()
	for _, b := range bodies {
		f.Add(b[0], b[1])
	}
	for _, b := range []string{
		apitest.Body(`{"name":"Rex","categoryId":1}`),
		apitest.Body(`{"name":"Rex","categoryId":9223372036854775807,"status":"sold"}`),
		apitest.Body(`{"categoryId":2,"name":"Tom — 🐈","status":"pending"}`),
		`{"name":"Rex","categoryId":1,"id":7}`,
		apitest.Body(`{"name":"a\u0000b","categoryId":1}`),
		apitest.Body(`{"name":"Rex","categoryId":1e2}`),
		apitest.Body(`{"name":"Rex","categoryId":1.0}`),
		apitest.Body(`{"name":"Rex","categoryId":9223372036854775808}`),
		`{"name":"Rex","categoryId":1} {}`,
		``,
	} {
		f.Add(b, "application/json")
	}
	f.Add(apitest.Body(`{"name":"Rex","categoryId":1}`), "application/json; charset=utf-8")
	f.Add(apitest.Body(`{"name":"Rex","categoryId":1}`), "")
	f.Fuzz(func(t *testing.T, body, contentType string) {
		ft.store.reset()
		raw := "POST " + apitest.Base() + "/pets HTTP/1.1\r\nHost: petstore.test\r\nAuthorization: Bearer " + testKey + "\r\n"
		if contentType != "" {
			raw += "Content-Type: " + contentType + "\r\n"
		}
		raw += "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
		res, ok := ft.send(t, raw)
		if !ok {
			return
		}
		page, err := ft.store.List(context.Background(), pets.Query{Limit: pets.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != http.StatusCreated {
			if len(page.Pets) != 0 {
				t.Fatalf("refused with %d, yet the store holds %+v", res.Status, page.Pets)
			}
			return
		}
		var got gen.Pet
		if err := json.Unmarshal(res.Body, &got); err != nil {
			t.Fatalf("201 body %q: %v", res.Body, err)
		}
		if len(page.Pets) != 1 || page.Pets[0].ID != got.Id || page.Pets[0].Name != got.Name || page.Pets[0].CategoryID != got.CategoryId || string(page.Pets[0].Status) != string(got.Status) {
			t.Fatalf("201 %+v, yet the store holds %+v", got, page.Pets)
		}
	})
}

func FuzzListPets(f *testing.F) {
	ft := newFuzzTarget(f)
	ft.seed(f, 30)
	_, queries, _ := hostileSeeds()
	for _, q := range append(queries,
		"", "limit=5", "limit=100&status=sold", "after=10&limit=3&status=pending", "status=available",
		"limit=0", "limit=101", "after=-1", "status=lost", "limt=5", "limit=5&limit=6", "after=9223372036854775807",
		"limit=%2B5", "limit=5&", "&&", "a=%", "status=sold#frag",
	) {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, query string) {
		ft.send(t, get(apitest.Path("/pets?")+query))
	})
}

func FuzzGetPet(f *testing.F) {
	ft := newFuzzTarget(f)
	ft.seed(f, 5)
	_, _, segments := hostileSeeds()
	for _, s := range append(segments,
		"1", "5", "6", "0", "-1", "abc", "%2e%2e", "1.0", "+1", "01", "99999999999999999999",
		"1/", "1/owner", "", "%31", "1?limit=5", "1#x",
	) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, segment string) {
		ft.send(t, get(apitest.Path("/pets/")+segment))
	})
}
