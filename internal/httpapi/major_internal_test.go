package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/contract"
)

// TestNewMajorMovesTheServer follows the compatibility gate through a
// breaking change, as a team regenerating the server would: against the
// contract as it is (here taken as released), the gate refuses it under the
// same major and asks for the next, N+1.0.0 with the base path /vN+1; once
// the spec says so, the app built from it serves /vN+1 and nothing under
// the old base path.
func TestNewMajorMovesTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the gate (go run tools/compat)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	released := filepath.Join(root, "openapi.yaml")
	raw, err := os.ReadFile(released)
	if err != nil {
		t.Fatal(err)
	}
	// Breaking: a smaller page limit refuses requests that passed before.
	const before, after = "maximum: 100\n        default: 20", "maximum: 50\n        default: 20"
	if !bytes.Contains(raw, []byte(before)) {
		t.Fatalf("openapi.yaml has no %q to change", before)
	}
	rev := bytes.Replace(raw, []byte(before), []byte(after), 1)

	gate := func(doc []byte) (string, bool) {
		t.Helper()
		file := filepath.Join(t.TempDir(), "openapi.yaml")
		if err := os.WriteFile(file, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		// -base: openapi.yaml as the release, so that the test holds
		// whatever the repository's own release is; -waivers: the
		// repository's name changes since its release, none of these;
		// -changelog "": CHANGELOG.md describes openapi.yaml, not this copy.
		cmd := exec.Command("go", "run", "-C", filepath.Join(root, "tools/compat"), ".", "check", "-dir", root,
			"-base", released, "-rev", file, "-waivers", filepath.Join(t.TempDir(), "none.yaml"), "-changelog", "")
		out, err := cmd.CombinedOutput()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatalf("the gate did not run: %v\n%s", err, out)
		}
		return string(out), err == nil
	}

	major, _, ok := strings.Cut(spec(t).Info.Version, ".")
	n, err := strconv.Atoi(major)
	if !ok || err != nil {
		t.Fatalf("info.version %q: no major", spec(t).Info.Version)
	}
	oldBase, next := apitest.Base(), fmt.Sprintf("%d.0.0", n+1)
	newBase := fmt.Sprintf("/v%d", n+1)
	out, ok := gate(rev)
	if ok || !strings.Contains(out, "need a major raise") || !strings.Contains(out, next) || !strings.Contains(out, newBase) {
		t.Fatalf("a breaking change at %s: the gate said (ok=%v)\n%s\nwant a refusal asking for a major raise to %s and %s", spec(t).Info.Version, ok, out, next, newBase)
	}

	version := []byte("\n  version: " + spec(t).Info.Version + "\n")
	if !bytes.Contains(rev, version) {
		t.Fatalf("openapi.yaml has no %q", version)
	}
	rev = bytes.Replace(rev, version, []byte("\n  version: "+next+"\n"), 1)
	rev = bytes.ReplaceAll(rev, []byte(oldBase), []byte(newBase)) // servers, Location, Link
	if out, ok := gate(rev); !ok {
		t.Fatalf("%s with %s: the gate refused it\n%s", next, newBase, out)
	}

	moved, err := openapi3.NewLoader().LoadFromData(rev)
	if err != nil {
		t.Fatal(err)
	}
	e, err := newApp(testConfig(), moved)
	if err != nil {
		t.Fatalf("the app of %s: %v", next, err)
	}
	cm, err := contract.New(moved, newBase)
	if err != nil {
		t.Fatal(err)
	}
	// do sends a request to the moved app and checks its answer against
	// the moved contract.
	do := func(method, path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer test-key-0123456789abcdef0123456789")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		for _, v := range cm.Check(req, rec.Code, rec.Header(), rec.Body.Bytes()) {
			t.Errorf("%s %s: %d breaks the %s contract: %v", method, path, rec.Code, next, v)
		}
		return rec
	}
	if rec := do(http.MethodPost, newBase+"/pets", apitest.Body(`{"name":"Rex","categoryId":1}`)); rec.Code != http.StatusCreated || rec.Header().Get("Location") != newBase+"/pets/1" {
		t.Errorf("POST %s/pets: %d, Location %q; want 201, %s/pets/1\n%s", newBase, rec.Code, rec.Header().Get("Location"), newBase, rec.Body)
	}
	if rec := do(http.MethodGet, newBase+"/pets?limit=50", ""); rec.Code != http.StatusOK {
		t.Errorf("GET %s/pets?limit=50: %d, want 200", newBase, rec.Code)
	}
	if rec := do(http.MethodGet, newBase+"/pets?limit=51", ""); rec.Code != http.StatusBadRequest {
		t.Errorf("GET %s/pets?limit=51: %d, want 400 (the new rule)", newBase, rec.Code)
	}
	for _, path := range []string{oldBase + "/pets", oldBase + "/pets/1"} {
		if rec := do(http.MethodGet, path, ""); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404 (%s serves %s only)", path, rec.Code, next, newBase)
		}
	}
}
