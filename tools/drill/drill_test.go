package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

func repoSpec(t *testing.T) []byte {
	t.Helper()
	spec, err := os.ReadFile("../../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// Each variant, and all of them at once, makes a spec that make generate
// takes: tools/shapegen refuses a member with no bound (a variant that
// lacked one failed the drill's first step, and only in CI).
func TestEditsBounded(t *testing.T) {
	orig := repoSpec(t)
	dir := t.TempDir()
	shapegen := filepath.Join(dir, "shapegen")
	if out, err := exec.Command("go", "build", "-o", shapegen, "../shapegen").CombinedOutput(); err != nil {
		t.Fatalf("go build shapegen: %v\n%s", err, out)
	}
	all := ""
	for _, v := range variants {
		all += v.ID
	}
	combined, err := variantByName(all)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range append(slices.Clone(variants), combined) {
		edited, err := v.edit(orig)
		if err != nil {
			continue // a tree the drill made has the member already (TestEdits)
		}
		spec := filepath.Join(dir, v.ID+".yaml")
		if err := os.WriteFile(spec, edited, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(shapegen, "-in", spec, "-out", filepath.Join(dir, v.ID+".go")).CombinedOutput(); err != nil {
			t.Errorf("variant %s: make generate's shapegen refuses it: %v\n%s", v.ID, err, out)
		}
	}
}

// Each variant, and all of them at once, makes a valid spec whose NewPet
// and Pet have the member (PetStatus the value), by inserting lines only
// (and the value into PetStatus's one-line enum): every other line of the
// file stays, in order, as it was.
func TestEdits(t *testing.T) {
	orig := repoSpec(t)
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "abcde", "g", "h", "i", "j", "k", "l", "ghijkl", "abcdefghijkl"} {
		v, err := variantByName(id)
		if err != nil {
			t.Fatal(err)
		}
		out, err := v.edit(orig)
		if applied(t, orig, v) {
			// A tree the drill made (or a later contract) has the member
			// already: the edit refuses to make it twice.
			if err == nil {
				t.Errorf("%s: made again over a spec that has it, without an error", id)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		kept := strings.SplitAfter(string(orig), "\n")
		if strings.Contains(v.memberNames(), "status") {
			kept = slices.DeleteFunc(kept, func(l string) bool { return strings.HasPrefix(l, "      enum: [available, pending, sold]") })
		}
		if len(v.Required) > 0 { // and the member into the one-line required lists
			kept = slices.DeleteFunc(kept, func(l string) bool { return strings.HasPrefix(l, "      required: [") })
		}
		if !subsequence(kept, strings.SplitAfter(string(out), "\n")) {
			t.Errorf("%s: a line of openapi.yaml changed or moved, not only lines inserted", id)
		}
		doc, err := openapi3.NewLoader().LoadFromData(out)
		if err == nil {
			err = doc.Validate(context.Background())
		}
		if err != nil {
			t.Fatalf("%s: the edited spec: %v", id, err)
		}
		if op := v.Op; op != nil {
			if o := doc.Paths.Value(op.Path).GetOperation(op.Method); o == nil || o.OperationID != op.ID {
				t.Errorf("%s: %s %s is not %s", id, op.Method, op.Path, op.ID)
			}
		}
		for _, m := range v.Members {
			if m.Name == "status" {
				if enum := doc.Components.Schemas["PetStatus"].Value.Enum; !slices.Contains(enum, any("reserved")) {
					t.Errorf("%s: PetStatus %v", id, enum)
				}
				continue
			}
			for _, s := range []string{"NewPet", "Pet"} {
				if doc.Components.Schemas[s].Value.Properties[m.Name] == nil {
					t.Errorf("%s: %s has no %s", id, s, m.Name)
				}
				if v.requires(m.Name) != slices.Contains(doc.Components.Schemas[s].Value.Required, m.Name) {
					t.Errorf("%s: %s requires %v, want %s required: %v", id, s, doc.Components.Schemas[s].Value.Required, m.Name, v.requires(m.Name))
				}
			}
		}
		if _, err := v.edit(out); err == nil {
			t.Errorf("%s: made twice without an error", id)
		}
	}
}

// applied reports whether spec already has one of v's members (or
// PetStatus its value, or its operation).
func applied(t *testing.T, spec []byte, v variant) bool {
	doc, err := openapi3.NewLoader().LoadFromData(spec)
	if err != nil {
		t.Fatal(err)
	}
	if v.Op != nil && doc.Paths.Value(v.Op.Path).GetOperation(v.Op.Method) != nil {
		return true
	}
	for _, m := range v.Members {
		if m.Name == "status" {
			if slices.Contains(doc.Components.Schemas["PetStatus"].Value.Enum, any("reserved")) {
				return true
			}
		} else if doc.Components.Schemas["NewPet"].Value.Properties[m.Name] != nil {
			return true
		}
	}
	return false
}

// subsequence reports whether every line of a is in b, in order.
func subsequence(a, b []string) bool {
	i := 0
	for _, l := range b {
		if i < len(a) && a[i] == l {
			i++
		}
	}
	return i == len(a)
}

// An enum written as a block sequence gains an item of the same indent.
func TestEnumEditBlock(t *testing.T) {
	spec := "components:\n  schemas:\n    PetStatus:\n      enum:\n        - available\n        - sold\n    Other: {}\n"
	out, err := enumEdit([]byte(spec), "PetStatus", "reserved")
	want := "components:\n  schemas:\n    PetStatus:\n      enum:\n        - available\n        - sold\n        - reserved\n    Other: {}\n"
	if err != nil || string(out) != want {
		t.Errorf("got %v\n%s", err, out)
	}
}

func TestVariantNames(t *testing.T) {
	for _, bad := range []string{"z", "aa", "ab?", ""} {
		if _, err := variantByName(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	v, err := variantByName("db")
	if err != nil || v.Raise != "major" || v.memberNames() != "status,tags" || v.Filter != "status=reserved" || v.Op != nil {
		t.Errorf("db: %+v %v", v, err)
	}
	v, err = variantByName("ae")
	if err != nil || v.Raise != "minor" || v.memberNames() != "chip" || v.Op == nil || v.Op.ID != "deletePet" {
		t.Errorf("ae: %+v %v", v, err)
	}
}

func TestForget(t *testing.T) {
	all, _ := variantByName("abcd")
	for _, tc := range []struct{ in, want string }{
		{`{"id":1,"name":"Rex","status":"reserved","tags":["b","a"],"chip":"1","size":{"unit":"cm","height":1}}`, `{"id":1,"name":"Rex","status":"available"}`},
		{`[{"id":1,"tags":[]},{"id":2,"name":"<&>"}]`, `[{"id":1},{"id":2,"name":"<&>"}]`},
		{`{"id": 1, "status": "sold"}`, `{"id": 1, "status": "sold"}`},    // nothing to forget: byte for byte
		{`{"code":"x","tags":["a"]}`, `{"code":"x","tags":["a"]}`},        // not a pet
		{`{"id":9007199254740993,"chip":"1"}`, `{"id":9007199254740993}`}, // numbers exact
	} {
		got, _ := forget(all, []byte(tc.in))
		if string(got) != tc.want {
			t.Errorf("forget(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestAsSent(t *testing.T) {
	b, _ := variantByName("b")
	c, _ := variantByName("c")
	for _, tc := range []struct {
		v    variant
		body string
		ok   bool
	}{
		{b, `{"id":3,"tags":["zeta","🐕 dog","alpha"]}`, true},
		{b, `{"id":3,"tags":["alpha","zeta","🐕 dog"]}`, false}, // sorted
		{b, `{"id":3}`, false},
		{c, `{"id":3,"size":{"height":1000,"unit":"in"}}`, true}, // members in another order: the same object
		{c, `{"id":3,"size":{"height":1000.0,"unit":"in"}}`, false},
		{c, `{"size":{"height":1000,"unit":"in"}}`, false},
	} {
		p, err := asSent(tc.v, []byte(tc.body))
		if (err == nil) != tc.ok || (tc.ok && p.id != 3) {
			t.Errorf("%s %s: %v", tc.v.ID, tc.body, err)
		}
	}
}

// The worked example of docs/evolving-the-contract.md shows the edit that
// `drill edit tags` makes.
func TestDocShowsTheEdit(t *testing.T) {
	doc, err := os.ReadFile("../../docs/evolving-the-contract.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "```yaml\ntags:\n" + indentBy(tagsSchema, 2) + "```\n"; !strings.Contains(string(doc), want) {
		t.Errorf("docs/evolving-the-contract.md does not show the member as drill edit tags adds it:\n%s", want)
	}
}

// The code of an added operation may touch the handler, the stores and a
// migration, nothing else; a change of data, nothing at all. The files
// variant e's code brings pass; one more does not, nor the same for a.
func TestFiles(t *testing.T) {
	t.Chdir("../..") // the patches' paths are the repository's
	e, _ := variantByName("e")
	code, err := patchFiles(e.Op.Code)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := filesCmd(&out, e, code); err != nil {
		t.Errorf("variant e's own code: %v", err)
	}
	for _, f := range code {
		if !strings.Contains(out.String(), f+" (") {
			t.Errorf("%s not named with its kind:\n%s", f, out.String())
		}
	}
	if err := filesCmd(io.Discard, e, append(code, "internal/httpapi/cors.go")); err == nil || !strings.Contains(err.Error(), "internal/httpapi/cors.go") {
		t.Errorf("cors.go beside e's code: %v, want it named", err)
	}
	if err := filesCmd(io.Discard, e, []string{"internal/httpapi/handlers.go"}); err != nil {
		t.Errorf("a part of e's code: %v", err)
	}
	a, _ := variantByName("a")
	if err := filesCmd(io.Discard, a, []string{"internal/httpapi/handlers.go"}); err == nil {
		t.Error("a hand-written file beside variant a's spec passes")
	}
	if err := filesCmd(io.Discard, a, nil); err != nil {
		t.Errorf("variant a with none: %v", err)
	}
	for file, kind := range map[string]string{
		"internal/httpapi/handlers.go": "the handler", "internal/pgstore/migrations/006_x.sql": "a migration",
		"internal/memstore/memstore_test.go": "", "internal/httpapi/cors.go": "", "internal/pgstore/pgstore.go": "the PostgreSQL store",
	} {
		if got := kindOf(file); got != kind {
			t.Errorf("kindOf(%s) = %q, want %q", file, got, kind)
		}
	}
}

// drill blind answers the operation done without sending it on, on any
// base path, when the server would carry it out (its GET answers 200);
// everything else goes through.
func TestNoop(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.Header.Get("Authorization") != "Bearer k" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if !strings.HasSuffix(r.URL.Path, "/pets/7") {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Deprecation", "@1")
		w.Header().Set("X-Request-Id", "r1")
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	target, _ := url.Parse(srv.URL)
	e, _ := variantByName("e")
	for _, tc := range []struct {
		method, path, key string
		swallowed         bool
	}{
		{"DELETE", "/base/pets/7", "k", true},
		{"DELETE", "/shop/api/pets/7", "k", true},
		{"DELETE", "/base/pets/8", "k", false}, // absent: the server answers
		{"DELETE", "/base/pets/7", "", false},  // refused: the server answers
		{"GET", "/base/pets/7", "k", false},
		{"DELETE", "/base/pets", "k", false},
		{"DELETE", "/base/pets/7/x", "k", false},
		{"DELETE", "/base/pets/", "k", false},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(tc.method, tc.path, nil)
		if tc.key != "" {
			req.Header.Set("Authorization", "Bearer "+tc.key)
		}
		got := noop(e, target, rec, req)
		if got != tc.swallowed || got && (rec.Code != http.StatusNoContent || rec.Header().Get("X-Request-Id") != "r1" || rec.Header().Get("Deprecation") != "") {
			t.Errorf("%s %s: swallowed %v (%d %v), want %v", tc.method, tc.path, got, rec.Code, rec.Header(), tc.swallowed)
		}
	}
	a, _ := variantByName("a")
	req := httptest.NewRequest("DELETE", "/base/pets/7", nil)
	req.Header.Set("Authorization", "Bearer k")
	if noop(a, target, httptest.NewRecorder(), req) {
		t.Error("variant a swallows a DELETE")
	}
}
