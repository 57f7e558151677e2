package conform_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform"
	"github.com/petstore/petstore/internal/contract"
)

// withWrites is openapi.yaml with PUT /pets/{petId} (replacePet, a NewPet
// body) and PATCH /pets/{petId} (updatePet, a JSON merge patch of NewPet's
// members, none required, answered 200 with the pet or 204), a link from
// createPet's 201 to getPet (GetPetById: petId from the body's id) and one
// from replacePet's 200 (GetReplaced: petId from the request's path).
func withWrites(t *testing.T) *openapi3.T {
	t.Helper()
	spec := withDeletePet(t)
	item := spec.Paths.Value("/pets/{petId}")
	c := spec.Components
	newPet := &openapi3.SchemaRef{Ref: "#/components/schemas/NewPet", Value: c.Schemas["NewPet"].Value}
	patch := openapi3.NewObjectSchema()
	patch.Properties = c.Schemas["NewPet"].Value.Properties
	ok := *item.Get.Responses.Status(http.StatusOK).Value
	responses := func() *openapi3.Responses {
		rs := openapi3.NewResponses()
		for code, ref := range item.Delete.Responses.Map() {
			if code != "204" {
				rs.Set(code, ref)
			}
		}
		rs.Set("200", &openapi3.ResponseRef{Value: &ok})
		rs.Delete("default")
		return rs
	}
	body := func(media string, s *openapi3.SchemaRef) *openapi3.RequestBodyRef {
		return &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithContent(openapi3.Content{media: openapi3.NewMediaType().WithSchemaRef(s)})}
	}
	item.Put = &openapi3.Operation{OperationID: "replacePet", Tags: []string{"animals"}, Parameters: item.Get.Parameters,
		RequestBody: body("application/json", newPet), Responses: responses()}
	item.Patch = &openapi3.Operation{OperationID: "updatePet", Tags: []string{"animals"}, Parameters: item.Get.Parameters,
		RequestBody: body("application/merge-patch+json", &openapi3.SchemaRef{Value: patch}), Responses: responses()}
	noContent := openapi3.NewResponse().WithDescription("Written.")
	noContent.Headers = item.Delete.Responses.Status(http.StatusNoContent).Value.Headers
	item.Patch.Responses.Set("204", &openapi3.ResponseRef{Value: noContent})
	putOK := ok
	putOK.Links = openapi3.Links{"GetReplaced": {Value: &openapi3.Link{OperationID: "getPet", Parameters: map[string]any{"path.petId": "$request.path.petId"}}}}
	item.Put.Responses.Set("200", &openapi3.ResponseRef{Value: &putOK})
	created := *spec.Paths.Value("/pets").Post.Responses.Status(http.StatusCreated).Value
	created.Links = openapi3.Links{"GetPetById": {Value: &openapi3.Link{OperationID: "getPet", Parameters: map[string]any{"petId": "$response.body#/id"}}}}
	spec.Paths.Value("/pets").Post.Responses.Set("201", &openapi3.ResponseRef{Value: &created})
	if err := spec.Validate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return spec
}

// writing is the real app (with d's DELETE) with PUT and PATCH of
// /pets/{petId} over it: each pet written is kept here, and a get or a
// listing of the app shows it instead of the app's. A write answers as the
// app's getPet would (authentication, a pet not found), else 200 with the
// pet written. Its fields plant the mutants.
type writing struct {
	d    *deleting
	base string
	// noopPut answers a PUT 200 with the pet it would make, and keeps
	// nothing; replacePatch keeps a PATCH's members only (a replace, not a
	// merge); put500Again answers a PUT of a pet put already 500;
	// lagging answers the first get of each pet 404, as if the create
	// were not yet seen: the link of the create's 201, followed at once.
	// patch204 answers a PATCH 204, no body: legal, the spec documents it.
	// hideAfterPut answers the first get after a PUT 404: its link.
	noopPut, replacePatch, put500Again, lagging, patch204, hideAfterPut bool

	mu   sync.Mutex
	pets map[int64]map[string]any
	puts map[int64]int
	read map[string]bool
	hide map[string]bool
}

func (w *writing) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	m := item.FindStringSubmatch(r.URL.Path)
	rec := httptest.NewRecorder()
	switch {
	case m != nil && (r.Method == http.MethodPut || r.Method == http.MethodPatch):
		id, _ := strconv.ParseInt(m[1], 10, 64)
		w.write(rec, r, id)
	case r.Method == http.MethodGet && m != nil && (w.lagging && w.firstRead(m[1]) || w.hidden(m[1])):
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = w.base+"/pets/"+missing, ""
		w.d.ServeHTTP(rec, r2)
	case r.Method == http.MethodGet && m != nil:
		w.d.ServeHTTP(rec, r)
		if rec.Code == http.StatusOK {
			setRecBody(rec, w.shown(rec.Body.Bytes()))
		}
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/pets"):
		w.d.ServeHTTP(rec, r)
		var page []json.RawMessage
		if rec.Code == http.StatusOK && json.Unmarshal(rec.Body.Bytes(), &page) == nil {
			for i := range page {
				page[i] = w.shown(page[i])
			}
			b, _ := json.Marshal(page)
			setRecBody(rec, b)
		}
	default:
		w.d.ServeHTTP(rec, r)
	}
	copyResponse(rw, rec)
}

// write answers a PUT or PATCH of pet id.
func (w *writing) write(rec *httptest.ResponseRecorder, r *http.Request, id int64) {
	body, _ := io.ReadAll(r.Body)
	get := r.Clone(r.Context())
	get.Method, get.Body, get.ContentLength = http.MethodGet, http.NoBody, 0
	get.Header.Del("Content-Type")
	w.d.ServeHTTP(rec, get)
	var sent map[string]any
	if rec.Code == http.StatusOK && json.Unmarshal(body, &sent) != nil {
		rec.Code = http.StatusBadRequest
		setRecBody(rec, []byte(`{"status":400,"code":"invalid_request","message":"The body is not a JSON object."}`))
	}
	if rec.Code != http.StatusOK {
		return
	}
	var pet map[string]any
	json.Unmarshal(w.shown(rec.Body.Bytes()), &pet)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.puts[id] += map[bool]int{true: 1}[r.Method == http.MethodPut]
	switch {
	case r.Method == http.MethodPut && w.put500Again && w.puts[id] > 1:
		rec.Code = http.StatusInternalServerError
		setRecBody(rec, []byte(`{"status":500,"code":"internal","message":"Internal error."}`))
		return
	case r.Method == http.MethodPut:
		pet = map[string]any{"id": id, "status": "available"}
	case w.replacePatch:
		pet = map[string]any{"id": id}
	}
	for k, v := range sent {
		if v == nil {
			delete(pet, k)
		} else {
			pet[k] = v
		}
	}
	if !(w.noopPut && r.Method == http.MethodPut) {
		w.pets[id] = pet
	}
	if w.hideAfterPut && r.Method == http.MethodPut {
		w.hide[strconv.FormatInt(id, 10)] = true
	}
	b, _ := json.Marshal(pet)
	setRecBody(rec, b)
	if w.patch204 && r.Method == http.MethodPatch {
		rec.Code = http.StatusNoContent
		rec.Body.Reset()
		rec.Header().Del("Content-Type")
		rec.Header().Del("Content-Length")
	}
}

// hidden reports whether pet id was put since its last get.
func (w *writing) hidden(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	h := w.hide[id]
	delete(w.hide, id)
	return h
}

// firstRead reports whether this is the first get of the pet id.
func (w *writing) firstRead(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	first := !w.read[id]
	w.read[id] = true
	return first
}

// shown is the pet raw as this server shows it: the one written, if any.
func (w *writing) shown(raw []byte) []byte {
	var pet struct{ ID int64 }
	json.Unmarshal(raw, &pet)
	w.mu.Lock()
	defer w.mu.Unlock()
	if p, ok := w.pets[pet.ID]; ok {
		b, _ := json.Marshal(p)
		return b
	}
	return raw
}

// setBody puts b in rec's body, with its length.
func setRecBody(rec *httptest.ResponseRecorder, b []byte) {
	rec.Body.Reset()
	rec.Body.Write(b)
	rec.Header().Set("Content-Length", strconv.Itoa(len(b)))
}

// method_semantics sends a PUT and a PATCH it was not written for, and
// follows the link of createPet's 201: a server that keeps their meaning
// is judged on each, and none is left unmodelled; each mutant fails
// method_semantics naming the operation.
func TestMethodSemanticsWrites(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		plant func(w *writing)
		fails string // the operation method_semantics fails
		want  string // in the failure's want
	}{
		{"puts, patches, links", func(*writing) {}, "", ""},
		{"a PATCH answered 204", func(w *writing) { w.patch204 = true }, "", ""},
		{"a PUT that answers 200 and changes nothing", func(w *writing) { w.noopPut = true }, "replacePet", "each member sent"},
		{"a PATCH that replaces: the members it did not send dropped", func(w *writing) { w.replacePatch = true }, "updatePet", "the others as the read before it showed them"},
		{"a PUT repeated answers 500", func(w *writing) { w.put500Again = true }, "replacePet", "repeated is answered 2xx"},
		{"a link whose target answers 404", func(w *writing) { w.lagging = true }, "createPet", "its link GetPetById, followed, is answered 2xx"},
		{"a PUT whose link's target answers 404", func(w *writing) { w.hideAfterPut = true }, "replacePet", "its link GetReplaced, followed, is answered 2xx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := withWrites(t)
			base, err := contract.BasePath(spec)
			if err != nil {
				t.Fatal(err)
			}
			w := &writing{d: &deleting{base: base, gone: map[int64]bool{}}, base: base, pets: map[int64]map[string]any{}, puts: map[int64]int{}, read: map[string]bool{}, hide: map[string]bool{}}
			tc.plant(w)
			url := serveSpec(t, spec, func(app http.Handler) http.Handler { w.d.app = app; return w })
			cfg := kitConfig(url)
			cfg.Spec = spec
			cfg.Checks = []string{"method_semantics"}
			rep, text := runKit(t, cfg)
			if tc.fails == "" {
				if rep.Verdict() == conform.Fail || slices.ContainsFunc(rep.Incomplete, func(g conform.Gap) bool {
					return g.Check == "method_semantics"
				}) {
					t.Fatalf("a server that keeps RFC 9110 and its links fails, or method_semantics is incomplete:\n%s", text)
				}
				for _, op := range []string{"replacePet", "updatePet", "createPet", "deletePet"} {
					if !judged(rep, op) {
						t.Errorf("method_semantics did not judge %s:\n%s", op, text)
					}
				}
				return
			}
			if !slices.ContainsFunc(rep.Failures, func(f conform.Failure) bool {
				return f.Check == "method_semantics" && f.Operation == tc.fails && strings.Contains(f.Want, tc.want)
			}) || !strings.Contains(text, "FAIL method_semantics ("+tc.fails+")") {
				t.Fatalf("method_semantics does not fail %s, wanting %q:\n%s", tc.fails, tc.want, text)
			}
		})
	}
}

// A PUT's body cases go to its valid target (the pet the kit made for the
// operations it has no model for) and want what the spec documents for
// it, never a create's 201 at the path's template.
func TestPutBodiesAreNoCreates(t *testing.T) {
	t.Parallel()
	spec := withWrites(t)
	base, err := contract.BasePath(spec)
	if err != nil {
		t.Fatal(err)
	}
	w := &writing{d: &deleting{base: base, gone: map[int64]bool{}}, base: base, pets: map[int64]map[string]any{}, puts: map[int64]int{}, read: map[string]bool{}, hide: map[string]bool{}}
	url := serveSpec(t, spec, func(app http.Handler) http.Handler { w.d.app = app; return w })
	cfg := kitConfig(url)
	cfg.Spec = spec
	cfg.Checks = []string{"positive_data_acceptance"}
	rep, text := runKit(t, cfg)
	if rep.Verdict() == conform.Fail || !slices.ContainsFunc(rep.Results, func(r conform.Result) bool {
		return r.Check == "positive_data_acceptance" && r.Operation == "replacePet" && r.Cases > 0
	}) {
		t.Fatalf("a PUT's valid bodies: want each accepted as the spec documents, judged:\n%s", text)
	}
}

// A link whose parameters the kit cannot evaluate leaves the run
// incomplete, naming it, and is not followed.
func TestUnresolvedLinkIncomplete(t *testing.T) {
	t.Parallel()
	spec := withWrites(t)
	created := spec.Paths.Value("/pets").Post.Responses.Status(http.StatusCreated).Value
	created.Links["Broken"] = &openapi3.LinkRef{Value: &openapi3.Link{OperationID: "getPet", Parameters: map[string]any{"petId": "$response.body#/nope"}}}
	base, err := contract.BasePath(spec)
	if err != nil {
		t.Fatal(err)
	}
	w := &writing{d: &deleting{base: base, gone: map[int64]bool{}}, base: base, pets: map[int64]map[string]any{}, puts: map[int64]int{}, read: map[string]bool{}, hide: map[string]bool{}}
	url := serveSpec(t, spec, func(app http.Handler) http.Handler { w.d.app = app; return w })
	cfg := kitConfig(url)
	cfg.Spec = spec
	cfg.Checks = []string{"method_semantics"}
	rep, text := runKit(t, cfg)
	if rep.Verdict() != conform.Incomplete || !slices.ContainsFunc(rep.Incomplete, func(g conform.Gap) bool {
		return g.What == "link Broken of operation createPet" && strings.Contains(g.Reason, "nothing at /nope")
	}) {
		t.Fatalf("a link the kit cannot evaluate: want the run incomplete, naming it:\n%s", text)
	}
}

// A PUT's invalid bodies go to a pet, never to the path's template (which
// a server refuses for its path, whatever the body).
func TestPutNegativesNameAPet(t *testing.T) {
	t.Parallel()
	spec := withWrites(t)
	var mu sync.Mutex
	var puts, templated int
	url := serveSpec(t, spec, func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && r.ContentLength > 0 {
				mu.Lock()
				puts++
				if strings.Contains(r.URL.EscapedPath(), "%7B") {
					templated++
				}
				mu.Unlock()
			}
			app.ServeHTTP(rw, r)
		})
	})
	cfg := kitConfig(url)
	cfg.Spec = spec
	cfg.Checks = []string{"negative_data_rejection"}
	runKit(t, cfg)
	mu.Lock()
	defer mu.Unlock()
	if puts == 0 || templated > 0 {
		t.Fatalf("%d PUTs with a body, %d of them to the path's template: want some, none there", puts, templated)
	}
}
