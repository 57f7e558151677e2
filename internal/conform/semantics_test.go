package conform_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform"
	"github.com/petstore/petstore/internal/contract"
)

// item is an id in a path of a pet: /pets/7.
var item = regexp.MustCompile(`/pets/([0-9]+)$`)

// semanticsTarget is a target with DELETE /pets/{petId} (deleting, which
// deletes as a store would) and, in front of it, a change of what a
// request means or how the target answers it.
type semanticsTarget struct {
	name string
	// front wraps d; app is the real app behind it.
	front func(d *deleting, app http.Handler) http.Handler
	// gone410 documents 410 for getPet in the spec, and the target answers
	// it for a pet deleted.
	gone410 bool
	fails   string // the operation method_semantics fails; "" for a target that passes
}

// The mutants and the legal variations of method_semantics.
var semanticsTargets = []semanticsTarget{
	{name: "deletes", front: func(d *deleting, _ http.Handler) http.Handler { return d }},
	{name: "deleted: 410", front: func(d *deleting, _ http.Handler) http.Handler { return gone410(d) }, gone410: true},
	{name: "deleted again: 204", front: func(d *deleting, _ http.Handler) http.Handler { return againAnswers(d, http.StatusNoContent) }},
	{name: "a delete that answers 204 and deletes nothing", front: noopDelete, fails: "deletePet"},
	{name: "a delete that deletes, the listing still shows it", front: listsDeleted, fails: "deletePet"},
	{name: "a delete repeated answers 500", front: func(d *deleting, _ http.Handler) http.Handler { return againAnswers(d, http.StatusInternalServerError) }, fails: "deletePet"},
	{name: "a post that creates two", front: postTwice, fails: "createPet"},
}

// method_semantics judges what a DELETE, an operation the kit was not
// written for, means, and what a create means: it catches each mutant,
// naming the operation, and passes the targets that keep RFC 9110 (a pet
// deleted answered 404 or 410, a repeated delete 404 or 204).
func TestMethodSemanticsMutants(t *testing.T) {
	t.Parallel()
	for _, tc := range semanticsTargets {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := withDeletePet(t)
			if tc.gone410 {
				documentGone(spec)
			}
			base, err := contract.BasePath(spec)
			if err != nil {
				t.Fatal(err)
			}
			d := &deleting{base: base, gone: map[int64]bool{}}
			url := serveSpec(t, spec, func(app http.Handler) http.Handler { d.app = app; return tc.front(d, app) })
			cfg := kitConfig(url)
			cfg.Spec = spec
			rep, text := runKit(t, cfg)
			if tc.fails == "" {
				if rep.Verdict() != conform.Pass || !judged(rep, "deletePet") || !judged(rep, "createPet") {
					t.Fatalf("a target that keeps RFC 9110 does not pass, or method_semantics did not judge deletePet and createPet:\n%s", text)
				}
				return
			}
			if !slices.ContainsFunc(rep.Failures, func(f conform.Failure) bool {
				return f.Check == "method_semantics" && f.Operation == tc.fails
			}) {
				t.Fatalf("method_semantics does not fail %s:\n%s", tc.fails, text)
			}
			if !strings.Contains(text, "FAIL method_semantics ("+tc.fails+")") {
				t.Errorf("the report does not name %s:\n%s", tc.fails, text)
			}
		})
	}
}

// judged reports whether method_semantics judged op.
func judged(rep *conform.Report, op string) bool {
	return slices.ContainsFunc(rep.Results, func(r conform.Result) bool {
		return r.Check == "method_semantics" && r.Operation == op && r.Cases > 0
	})
}

// An operation no rule covers (a PUT, here) makes the run incomplete, and
// names it: its meaning is not judged, and the run has not passed.
func TestUncoveredOperationIncomplete(t *testing.T) {
	t.Parallel()
	spec := withDeletePet(t)
	item := spec.Paths.Value("/pets/{petId}")
	item.Put = &openapi3.Operation{OperationID: "replacePet", Parameters: item.Get.Parameters, Responses: item.Delete.Responses}
	base, err := contract.BasePath(spec)
	if err != nil {
		t.Fatal(err)
	}
	d := &deleting{base: base, gone: map[int64]bool{}}
	url := serveSpec(t, spec, func(app http.Handler) http.Handler { d.app = app; return d })
	cfg := kitConfig(url)
	cfg.Spec = spec
	cfg.Checks = []string{"method_semantics"}
	rep, text := runKit(t, cfg)
	if rep.Verdict() != conform.Incomplete || !slices.ContainsFunc(rep.Incomplete, func(g conform.Gap) bool {
		return g.What == "operation replacePet" && strings.HasPrefix(g.Reason, "meaning not modelled")
	}) {
		t.Fatalf("a PUT no rule covers: want the run incomplete, naming replacePet:\n%s", text)
	}
	if !judged(rep, "deletePet") {
		t.Errorf("deletePet not judged beside it:\n%s", text)
	}
}

// documentGone adds 410 to getPet's answers: a pet deleted.
func documentGone(spec *openapi3.T) {
	get := spec.Paths.Value("/pets/{petId}").Get
	gone := *get.Responses.Status(http.StatusNotFound).Value
	gone.Description = ptr("The animal was removed.")
	gone.Content = openapi3.NewContentWithJSONSchemaRef(spec.Components.Schemas["Error"])
	get.Responses.Set("410", &openapi3.ResponseRef{Value: &gone})
}

func ptr[T any](v T) *T { return &v }

// gone410 answers 410 where d answers a get 404 for a pet it deleted.
func gone410(d *deleting) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		d.ServeHTTP(rec, r)
		if m := item.FindStringSubmatch(r.URL.Path); r.Method == http.MethodGet && m != nil && rec.Code == http.StatusNotFound && d.isGone(m[1]) {
			body := `{"status":410,"code":"not_found","message":"The animal was removed."}`
			rec.Code = http.StatusGone
			rec.Body.Reset()
			rec.Body.WriteString(body)
			rec.Header().Set("Content-Length", fmt.Sprint(len(body)))
		}
		copyResponse(w, rec)
	})
}

// isGone reports whether d deleted the pet of id.
func (d *deleting) isGone(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	var n int64
	_, err := fmt.Sscan(id, &n)
	return err == nil && d.gone[n]
}

// againAnswers answers a delete of a pet d deleted already, which d
// answers 404, with status instead (its headers kept, its body an Error).
func againAnswers(d *deleting, status int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := item.FindStringSubmatch(r.URL.Path)
		rec := httptest.NewRecorder()
		d.ServeHTTP(rec, r)
		if r.Method == http.MethodDelete && m != nil && rec.Code == http.StatusNotFound && d.isGone(m[1]) {
			rec.Code = status
			rec.Body.Reset()
			if status == http.StatusNoContent {
				rec.Header().Del("Content-Type")
				rec.Header().Del("Content-Length")
			} else {
				body := fmt.Sprintf(`{"status":%d,"code":"internal","message":"Internal error."}`, status)
				rec.Body.WriteString(body)
				rec.Header().Set("Content-Length", fmt.Sprint(len(body)))
			}
		}
		copyResponse(w, rec)
	})
}

// noopDelete answers a delete as d would, 204, and deletes nothing.
func noopDelete(d *deleting, _ http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodDelete || item.FindStringSubmatch(r.URL.Path) == nil {
			d.ServeHTTP(w, r)
			return
		}
		get := r.Clone(r.Context())
		get.Method = http.MethodGet
		rec := httptest.NewRecorder()
		d.ServeHTTP(rec, get)
		if rec.Code != http.StatusOK {
			d.ServeHTTP(w, r)
			return
		}
		for name, vs := range rec.Header() {
			switch name {
			case "Content-Type", "Content-Length", "Deprecation", "Sunset", "Link":
			default:
				w.Header()[name] = vs
			}
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// listsDeleted deletes as d does, but the listing is the app's: it still
// shows the pets deleted.
func listsDeleted(d *deleting, app http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/pets") {
			app.ServeHTTP(w, r)
			return
		}
		d.ServeHTTP(w, r)
	})
}

// postTwice creates every pet twice: a create answered 201 is sent again,
// without its Idempotency-Key, and that answer dropped.
func postTwice(d *deleting, _ http.Handler) http.Handler {
	var mu sync.Mutex // one create at a time: the two pets of one are neighbours
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/pets") {
			d.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		d.ServeHTTP(rec, r)
		if rec.Code == http.StatusCreated {
			again := r.Clone(r.Context())
			again.Header.Del("Idempotency-Key")
			again.Body = io.NopCloser(bytes.NewReader(body))
			d.ServeHTTP(httptest.NewRecorder(), again)
		}
		copyResponse(w, rec)
	})
}
