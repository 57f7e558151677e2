package storetest

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/apitest"
)

// toy is a collection at /things, its members at /things/{id}, served by
// POST, GET and DELETE as the rules of testOperations read them, or with
// one defect.
type toy struct {
	defect  string
	mu      sync.Mutex
	members map[int]string
	next    int
}

func (s *toy) DoBytes(_ testing.TB, method, path string, body []byte, _ ...string) apitest.Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, err := strconv.Atoi(strings.TrimPrefix(path, "/things/"))
	switch {
	case path == "/things" && method == http.MethodPost:
		n := 1
		if s.defect == "two creates" {
			n = 2
		}
		for range n {
			s.next++
			s.members[s.next] = fmt.Sprintf(`{"id":%d,"thing":%s}`, s.next, body)
		}
		return apitest.Response{Status: 201, Header: http.Header{"Location": {"/things/" + strconv.Itoa(s.next)}}, Body: []byte(s.members[s.next])}
	case path == "/things" && method == http.MethodGet:
		page := []json.RawMessage{}
		for _, id := range slices.Sorted(maps.Keys(s.members)) {
			page = append(page, json.RawMessage(s.members[id]))
		}
		b, _ := json.Marshal(page)
		if s.defect == "unsafe list" {
			s.next++
			s.members[s.next] = fmt.Sprintf(`{"id":%d}`, s.next)
		}
		return apitest.Response{Status: 200, Body: b}
	case err != nil || s.members[id] == "":
		return apitest.Response{Status: 404, Body: []byte(`{}`)}
	case method == http.MethodGet:
		if s.defect == "another read" {
			return apitest.Response{Status: 200, Body: []byte(`{"id":0}`)}
		}
		return apitest.Response{Status: 200, Body: []byte(s.members[id])}
	case method == http.MethodDelete:
		switch s.defect {
		case "no-op delete":
		case "delete all":
			clear(s.members)
		default:
			delete(s.members, id)
		}
		return apitest.Response{Status: 204}
	}
	return apitest.Response{Status: 405}
}

func toyAPI(defect string, extra ...operation) *api {
	body := openapi3.NewObjectSchema().WithProperty("name", openapi3.NewStringSchema().WithMinLength(1)).WithRequired([]string{"name"})
	return &api{c: &toy{defect: defect, members: map[int]string{}}, ops: append([]operation{
		{id: "listThings", method: http.MethodGet, path: "/things"},
		{id: "createThing", method: http.MethodPost, path: "/things", body: body},
		{id: "getThing", method: http.MethodGet, path: "/things/{id}"},
		{id: "deleteThing", method: http.MethodDelete, path: "/things/{id}"},
	}, extra...)}
}

// failures records what a rule reports; Fatalf ends the rule's goroutine.
type failures struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (f *failures) Helper() {}
func (f *failures) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}
func (f *failures) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	runtime.Goexit()
}

// judged is what judging each operation of a reports, by operation.
func judged(t *testing.T, a *api) map[string][]string {
	out := map[string][]string{}
	for _, o := range a.ops {
		f := &failures{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			a.judge(f, o)
		}()
		<-done
		if len(f.msgs) > 0 {
			out[o.id] = f.msgs
		}
	}
	return out
}

// TestOperationRules: the rules pass a collection that keeps what its
// methods mean, and each defect fails the operation it breaks, named; an
// operation no rule judges fails too.
func TestOperationRules(t *testing.T) {
	if got := judged(t, toyAPI("")); len(got) > 0 {
		t.Errorf("a sound collection: %v", got)
	}
	for _, tc := range []struct{ defect, op, says string }{
		{"no-op delete", "deleteThing", "then its GET answered 200"},
		{"delete all", "deleteThing", "another member"},
		{"two creates", "createThing", "a create makes exactly one member"},
		{"another read", "getThing", "want 200 and the member as its create showed it"},
		{"unsafe list", "listThings", "after the GET the listing"},
	} {
		got := judged(t, toyAPI(tc.defect))
		if !slices.ContainsFunc(got[tc.op], func(m string) bool { return strings.Contains(m, tc.says) }) {
			t.Errorf("%s: %s's failures %q, want one saying %q (all: %v)", tc.defect, tc.op, got[tc.op], tc.says, got)
		}
	}
	got := judged(t, toyAPI("", operation{id: "replaceThing", method: http.MethodPut, path: "/things/{id}"}))
	if want := "no rule of storetest's operations judges it"; len(got["replaceThing"]) != 1 || !strings.Contains(got["replaceThing"][0], want) {
		t.Errorf("an operation no rule judges: %v, want replaceThing failed, %q", got, want)
	}
}
