package conform_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/conform"
	"github.com/petstore/petstore/internal/contract"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
)

// serveSpec starts the real app over a memory store, both test keys, with
// wrap around it, and returns its base URL under spec's base path.
func serveSpec(t *testing.T, spec *openapi3.T, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	return serveApp(t, httpapi.Config{}, spec, wrap)
}

// serveApp is serveSpec with the app built from cfg (its store and keys
// set when not): cfg.Spec is what the app serves, spec what the URL is
// under.
func serveApp(t *testing.T, cfg httpapi.Config, spec *openapi3.T, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store = memstore.New()
	}
	if cfg.Keys == nil {
		cfg.Keys = apikey.NewSet(apikey.Hash(testKey), apikey.Hash(testKey2))
	}
	app, err := httpapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base, err := contract.BasePath(spec)
	if err != nil {
		t.Fatal(err)
	}
	return listen(t, wrap(app)).URL + base
}

// withDeletePet is openapi.yaml with one more operation, DELETE
// /pets/{petId} (deletePet): 204, or 404 for a pet that is not there.
func withDeletePet(t *testing.T) *openapi3.T {
	t.Helper()
	spec, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	item := spec.Paths.Value("/pets/{petId}")
	c := spec.Components
	ref := func(name string) *openapi3.ResponseRef {
		return &openapi3.ResponseRef{Ref: "#/components/responses/" + name, Value: c.Responses[name].Value}
	}
	headers := openapi3.Headers{}
	for _, h := range []string{"Access-Control-Allow-Origin", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
		headers[h] = &openapi3.HeaderRef{Ref: "#/components/headers/" + h, Value: c.Headers[h].Value}
	}
	notFound := *item.Get.Responses.Status(http.StatusNotFound).Value
	notFound.Headers = headers
	removed := openapi3.NewResponse().WithDescription("The animal was removed.")
	removed.Headers = headers
	responses := openapi3.NewResponses(
		openapi3.WithStatus(http.StatusNoContent, &openapi3.ResponseRef{Value: removed}),
		openapi3.WithStatus(http.StatusNotFound, &openapi3.ResponseRef{Value: &notFound}),
	)
	for status, name := range map[int]string{400: "BadRequest", 401: "Unauthorized", 406: "NotAcceptable", 429: "TooManyRequests", 431: "RequestHeaderFieldsTooLarge", 500: "InternalError", 503: "Unavailable"} {
		responses.Set(strconv.Itoa(status), ref(name))
	}
	item.Delete = &openapi3.Operation{OperationID: "deletePet", Tags: []string{"animals"}, Summary: "Remove an animal", Parameters: item.Get.Parameters, Responses: responses}
	if err := spec.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return spec
}

// deleting is the real app with DELETE /pets/{petId}: it answers as the
// app's getPet would (authentication, validation, every rule of every
// answer), 204 without a body where that is 200, and from then on the pet
// is gone: getPet answers 404 and listings leave it out, pages filled from
// the pets after it, as a store that deletes would. A 405 on the path lists
// DELETE, and so does a preflight's Access-Control-Allow-Methods.
type deleting struct {
	app  http.Handler
	base string
	// answer200 makes it answer a delete 200 with the pet, which the spec
	// does not document: the kit judges the form of every answer.
	answer200 bool

	mu      sync.Mutex
	gone    map[int64]bool
	deleted int
}

// missing is an id no pet of a test ever has.
const missing = "9223372036854775807"

func (d *deleting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, isPets := strings.CutPrefix(r.URL.EscapedPath(), d.base+"/pets")
	item := isPets && strings.HasPrefix(rest, "/") && !strings.Contains(rest[1:], "/") && rest != "/"
	switch {
	case isPets && rest == "" && r.Method == http.MethodGet:
		d.list(w, r)
		return
	case !item:
		d.app.ServeHTTP(w, r)
		return
	}
	id, err := strconv.ParseInt(rest[1:], 10, 64)
	d.mu.Lock()
	gone := err == nil && strconv.FormatInt(id, 10) == rest[1:] && d.gone[id]
	d.mu.Unlock()
	r2 := r.Clone(r.Context())
	if gone {
		r2.URL.Path, r2.URL.RawPath = d.base+"/pets/"+missing, ""
	}
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") == http.MethodDelete {
		r2.Header.Set("Access-Control-Request-Method", http.MethodGet)
	}
	if r.Method != http.MethodDelete {
		rec := httptest.NewRecorder()
		d.app.ServeHTTP(rec, r2)
		if rec.Code == http.StatusMethodNotAllowed {
			rec.Header().Set("Allow", "DELETE, GET")
		}
		if m := rec.Header().Get("Access-Control-Allow-Methods"); m != "" {
			rec.Header().Set("Access-Control-Allow-Methods", m+",DELETE")
		}
		copyResponse(w, rec)
		return
	}
	r2.Method = http.MethodGet
	rec := httptest.NewRecorder()
	d.app.ServeHTTP(rec, r2)
	for _, h := range []string{"Deprecation", "Sunset", "Link"} {
		rec.Header().Del(h)
	}
	if rec.Code == http.StatusOK && !d.answer200 {
		d.mu.Lock()
		d.gone[id] = true
		d.deleted++
		d.mu.Unlock()
		rec.Header().Del("Content-Type")
		rec.Header().Del("Content-Length")
		rec.Body.Reset()
		rec.Code = http.StatusNoContent
	}
	copyResponse(w, rec)
}

// list answers a listing as the app would if the pets gone were not there:
// each page of the app's filtered, and filled from its next pages.
func (d *deleting) list(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	none := len(d.gone) == 0
	d.mu.Unlock()
	if none {
		d.app.ServeHTTP(w, r)
		return
	}
	first := httptest.NewRecorder()
	d.app.ServeHTTP(first, r)
	if first.Code != http.StatusOK {
		copyResponse(w, first)
		return
	}
	q := r.URL.Query()
	limit := 20
	if l := q.Get("limit"); l != "" {
		limit, _ = strconv.Atoi(l)
	}
	var kept []json.RawMessage
	rec, more := first, false
	for {
		var page []json.RawMessage
		json.Unmarshal(rec.Body.Bytes(), &page)
		for i, p := range page {
			var pet struct{ ID int64 }
			json.Unmarshal(p, &pet)
			d.mu.Lock()
			gone := d.gone[pet.ID]
			d.mu.Unlock()
			if gone {
				continue
			}
			if len(kept) == limit {
				more = true
				break
			}
			kept = append(kept, page[i])
		}
		next := rec.Header().Get("Link")
		if more || next == "" {
			more = more || next != "" && len(kept) == limit
			break
		}
		target := next[strings.Index(next, "<")+1 : strings.Index(next, ">")]
		u, _ := url.Parse(target)
		r2 := r.Clone(r.Context())
		r2.URL.RawQuery = u.RawQuery
		rec = httptest.NewRecorder()
		d.app.ServeHTTP(rec, r2)
		if rec.Code != http.StatusOK {
			copyResponse(w, rec)
			return
		}
	}
	first.Header().Del("Link")
	if more {
		var last struct{ ID int64 }
		json.Unmarshal(kept[len(kept)-1], &last)
		q.Set("after", strconv.FormatInt(last.ID, 10))
		q.Set("limit", strconv.Itoa(limit))
		link := d.base + "/pets?after=" + q.Get("after") + "&limit=" + q.Get("limit")
		if s := q.Get("status"); s != "" {
			link += "&status=" + s
		}
		first.Header().Set("Link", "<"+link+`>; rel="next"`)
	}
	body, _ := json.Marshal(kept)
	if kept == nil {
		body = []byte("[]")
	}
	first.Body.Reset()
	first.Body.Write(body)
	first.Header().Set("Content-Length", strconv.Itoa(len(body)))
	copyResponse(w, first)
}

// An added operation never makes the kit fail a conforming server: with a
// spec and a target that both have DELETE /pets/{petId}, which removes pets
// (the spare the kit makes for it, the pets at the bounds of petId), the
// kit passes, judges every answer of it on form, and its meaning by
// method_semantics. The same target answering the delete 200, which the
// spec does not document, fails on form.
func TestAddedOperation(t *testing.T) {
	t.Parallel()
	spec := withDeletePet(t)
	base, err := contract.BasePath(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, answer200 := range []bool{false, true} {
		t.Run(fmt.Sprintf("answer200=%v", answer200), func(t *testing.T) {
			t.Parallel()
			d := &deleting{base: base, gone: map[int64]bool{}, answer200: answer200}
			url := serveSpec(t, spec, func(app http.Handler) http.Handler { d.app = app; return d })
			cfg := kitConfig(url)
			cfg.Spec = spec
			rep, text := runKit(t, cfg)
			judged := slices.ContainsFunc(rep.Results, func(r conform.Result) bool {
				return r.Operation == "deletePet" && r.Check == contract.StatusCode && r.Cases > 0
			})
			if answer200 {
				if !rep.Failed(contract.StatusCode) || !judged {
					t.Fatalf("a delete answered 200, which the spec does not document, passes:\n%s", text)
				}
				return
			}
			if rep.Verdict() != conform.Pass || !judged {
				t.Fatalf("the kit fails a conforming server with one more operation, or does not judge it:\n%s", text)
			}
			if !slices.ContainsFunc(rep.Results, func(r conform.Result) bool {
				return r.Operation == "deletePet" && r.Check == "method_semantics" && r.Cases > 0
			}) {
				t.Errorf("deletePet's meaning not judged by method_semantics:\n%s", text)
			}
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.deleted < 2 {
				t.Errorf("%d pets deleted, want the spare and a pet at a bound of petId at least", d.deleted)
			}
		})
	}
}
