package storetest

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/schemagen"
	"github.com/petstore/petstore/internal/value"
)

// testOperations judges every operation of the spec the server embeds,
// through the app (httpapi) over s, by what its method means in HTTP (RFC
// 9110 section 9.3), so that an operation added to the spec is judged on
// every store the suite runs on with no test written for it:
//
//   - a POST to a collection creates exactly one member: a 2xx with a
//     Location, which the member's GET reads as the answer showed it, and
//     the collection's listing gains that member alone;
//   - a GET is safe: the listing is as it was;
//   - a DELETE of a member answers 2xx; then the member's GET is 404, the
//     listing omits it and keeps the others, and the DELETE sent again
//     changes nothing (section 9.2.2, idempotent);
//   - an operation of any other method, or of another shape, fails the
//     suite, named: no rule here judges it, and silence would pass it.
//
// The roles come from the paths: a collection's POST makes its members (at
// {param} below it), its GET lists them (a JSON array, pages followed by
// Link rel="next"), and a member's GET reads it.
func testOperations(t *testing.T, s pets.Store) {
	a := newAPI(t, s)
	for _, o := range a.ops {
		t.Run(o.id, func(t *testing.T) { a.judge(t, o) })
	}
}

// doer sends a request and checks its answer: *apitest.Client, against the
// contract; a stand-in in the suite's own tests.
type doer interface {
	DoBytes(t testing.TB, method, path string, body []byte, header ...string) apitest.Response
}

// operation is one operation of the spec, its path template under the
// base path, and its request body's schema (nil without one).
type operation struct {
	id, method, path string
	body             *openapi3.Schema
}

// api is the app over a store, the spec's operations, and a client that
// checks every answer against the contract.
type api struct {
	c   doer
	ops []operation
}

const operationsKey = "storetest-key-0123456789abcdef0123456789"

func newAPI(t *testing.T, s pets.Store) *api {
	t.Helper()
	app, err := httpapi.New(httpapi.Config{Store: s, Keys: apikey.NewSet(apikey.Hash(operationsKey))})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	a := &api{c: &apitest.Client{Contract: apitest.Load(t), Handler: app, Key: operationsKey}}
	for _, op := range apitest.Operations() {
		o := operation{id: op.ID, method: op.Method, path: op.Path}
		item := spec.Paths.Value(strings.TrimPrefix(op.Path, apitest.Base()))
		if body := item.GetOperation(op.Method).RequestBody; body != nil && body.Value != nil {
			if mt := body.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
				o.body = mt.Schema.Value
			}
		}
		a.ops = append(a.ops, o)
	}
	return a
}

// judge applies the rule of o's method and shape.
func (a *api) judge(t testing.TB, o operation) {
	coll, member := collectionOf(o.path)
	switch {
	case o.method == http.MethodGet && member:
		loc, created := a.create(t, o, coll)
		before := a.list(t, o, coll)
		if status, got := a.read(t, o, loc); status != http.StatusOK || got != created {
			t.Errorf("%s: GET %s answered %d %s, want 200 and the member as its create showed it, %s", o.id, loc, status, got, created)
		}
		a.same(t, o, coll, before, "the GET")
	case o.method == http.MethodGet:
		before := a.list(t, o, o.path)
		a.c.DoBytes(t, o.method, o.path, nil)
		a.same(t, o, o.path, before, "the GET")
	case o.method == http.MethodPost && !member:
		before := a.list(t, o, o.path)
		loc, created := a.create(t, o, o.path)
		if after := a.list(t, o, o.path); !slices.Equal(after, append(before, created)) {
			t.Errorf("%s: the listing after the create is %s, want the one before and %s: a create makes exactly one member", o.id, after, created)
		}
		if status, got := a.read(t, o, loc); status != http.StatusOK || got != created {
			t.Errorf("%s: GET %s, the created member, answered %d %s; want 200 %s", o.id, loc, status, got, created)
		}
	case o.method == http.MethodDelete && member:
		a.judgeDelete(t, o, coll)
	default:
		t.Errorf("%s (%s %s): no rule of storetest's operations judges it (RFC 9110 section 9.3): add the rule of its method, or it passes unjudged", o.id, o.method, o.path)
	}
}

// judgeDelete: two members made, the first deleted: gone from its GET and
// the listing, the second kept; the DELETE again changes nothing.
func (a *api) judgeDelete(t testing.TB, o operation, coll string) {
	gone, goneBody := a.create(t, o, coll)
	kept, keptBody := a.create(t, o, coll)
	if res := a.c.DoBytes(t, o.method, gone, nil); res.Status/100 != 2 {
		t.Fatalf("%s: DELETE %s of a member just created answered %d %s, want 2xx", o.id, gone, res.Status, res.Body)
	}
	if status, got := a.read(t, o, gone); status != http.StatusNotFound {
		t.Errorf("%s: DELETE %s answered 2xx, then its GET answered %d %s; want 404: the member was not deleted (RFC 9110 section 9.3.5)", o.id, gone, status, got)
	}
	after := a.list(t, o, coll)
	if slices.Contains(after, goneBody) || !slices.Contains(after, keptBody) {
		t.Errorf("%s: after DELETE %s the listing is %s: want it without %s and with %s", o.id, gone, after, goneBody, keptBody)
	}
	if status, got := a.read(t, o, kept); status != http.StatusOK || got != keptBody {
		t.Errorf("%s: DELETE %s, then GET %s, another member, answered %d %s; want 200 %s", o.id, gone, kept, status, got, keptBody)
	}
	if res := a.c.DoBytes(t, o.method, gone, nil); res.Status/100 == 5 {
		t.Errorf("%s: DELETE %s again answered %d %s", o.id, gone, res.Status, res.Body)
	}
	a.same(t, o, coll, after, "the DELETE sent again")
}

// collectionOf is the collection a member's path is below ("/vN/pets" for
// "/vN/pets/{petId}"), and whether path is a member's: its last segment a
// parameter. For any other path, path itself.
func collectionOf(path string) (string, bool) {
	i := strings.LastIndexByte(path, '/')
	if last := path[i+1:]; strings.HasPrefix(last, "{") && strings.HasSuffix(last, "}") {
		return path[:i], true
	}
	return path, false
}

// find is the operation of method on path, or nil.
func (a *api) find(method, path string) *operation {
	for i, o := range a.ops {
		if o.method == method && o.path == path {
			return &a.ops[i]
		}
	}
	return nil
}

// create makes a member of coll with its POST, the smallest body its
// schema accepts; it returns the member's Location and the answer's body,
// canonical. An operation on a collection without a POST cannot be judged.
func (a *api) create(t testing.TB, o operation, coll string) (string, string) {
	t.Helper()
	post := a.find(http.MethodPost, coll)
	if post == nil || post.body == nil {
		t.Fatalf("%s: no POST with a body on %s makes a member to judge it on", o.id, coll)
	}
	g := schemagen.New(simplest{})
	g.Members = schemagen.RequiredMembers
	v, err := g.Value(post.body)
	if err != nil {
		t.Fatalf("%s: a body for %s: %v", o.id, post.id, err)
	}
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	res := a.c.DoBytes(t, post.method, coll, body)
	loc := res.Header.Get("Location")
	if res.Status/100 != 2 || loc == "" {
		t.Fatalf("%s: %s %s %s, to make a member: got %d %s, Location %q; want 2xx and a Location", o.id, post.method, coll, body, res.Status, res.Body, loc)
	}
	return loc, canonical(t, o, res.Body)
}

// simplest is a schemagen.Source that always chooses the simplest value.
type simplest struct{}

func (simplest) IntN(int) int { return 0 }

// read is the status of GET target, a member, and its body: canonical
// when 200, as sent otherwise.
func (a *api) read(t testing.TB, o operation, target string) (int, string) {
	t.Helper()
	res := a.c.DoBytes(t, http.MethodGet, target, nil)
	if res.Status != http.StatusOK {
		return res.Status, string(res.Body)
	}
	return res.Status, canonical(t, o, res.Body)
}

// nextLink is a listing's Link rel="next".
var nextLink = regexp.MustCompile(`^<([^>]+)>; rel="next"$`)

// list is every member coll's GET lists, canonical, page after page; nil
// when coll has no GET.
func (a *api) list(t testing.TB, o operation, coll string) []string {
	t.Helper()
	if a.find(http.MethodGet, coll) == nil {
		return nil
	}
	var out []string
	for target, pages := coll, 0; target != ""; pages++ {
		if pages == 1000 {
			t.Fatalf("%s: GET %s: more than 1000 pages", o.id, coll)
		}
		res := a.c.DoBytes(t, http.MethodGet, target, nil)
		var page []json.RawMessage
		if err := json.Unmarshal(res.Body, &page); res.Status != http.StatusOK || err != nil {
			t.Fatalf("%s: GET %s: got %d %s, want 200 and an array", o.id, target, res.Status, res.Body)
		}
		for _, m := range page {
			out = append(out, canonical(t, o, m))
		}
		target = ""
		if m := nextLink.FindStringSubmatch(res.Header.Get("Link")); m != nil {
			target = m[1]
		}
	}
	return out
}

// same fails t unless coll's listing is before, after what.
func (a *api) same(t testing.TB, o operation, coll string, before []string, what string) {
	t.Helper()
	if after := a.list(t, o, coll); !slices.Equal(after, before) {
		t.Errorf("%s: after %s the listing of %s is %s, want it as before, %s", o.id, what, coll, after, before)
	}
}

func canonical(t testing.TB, o operation, body []byte) string {
	t.Helper()
	c, err := value.TextOf(body)
	if err != nil {
		t.Fatalf("%s: %s: %v", o.id, body, err)
	}
	return string(c)
}
