package httpapi

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/contract"
)

// TestNewMajorMovesTheServer follows the compatibility gate through a
// breaking change, as a team regenerating the server would: the gate
// refuses it at 1.x and asks for 2.0.0 with the base path /v2; once the
// spec says so, the app built from it serves /v2 and nothing under /v1.
func TestNewMajorMovesTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the gate (go run tools/compat)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "openapi.yaml"))
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
		// -changelog "": CHANGELOG.md describes openapi.yaml, not this copy.
		cmd := exec.Command("go", "run", "-C", filepath.Join(root, "tools/compat"), ".", "check", "-dir", root, "-rev", file, "-changelog", "")
		out, err := cmd.CombinedOutput()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatalf("the gate did not run: %v\n%s", err, out)
		}
		return string(out), err == nil
	}

	out, ok := gate(rev)
	if ok || !strings.Contains(out, "need a major raise") || !strings.Contains(out, "/v2") {
		t.Fatalf("a breaking change at 1.x: the gate said (ok=%v)\n%s\nwant a refusal asking for a major raise and /v2", ok, out)
	}

	version := []byte("\n  version: " + spec(t).Info.Version + "\n")
	if !bytes.Contains(rev, version) {
		t.Fatalf("openapi.yaml has no %q", version)
	}
	rev = bytes.Replace(rev, version, []byte("\n  version: 2.0.0\n"), 1)
	rev = bytes.ReplaceAll(rev, []byte("/v1"), []byte("/v2")) // servers, Location, Link
	if out, ok := gate(rev); !ok {
		t.Fatalf("2.0.0 with /v2: the gate refused it\n%s", out)
	}

	v2, err := openapi3.NewLoader().LoadFromData(rev)
	if err != nil {
		t.Fatal(err)
	}
	e, err := newApp(testConfig(), v2)
	if err != nil {
		t.Fatalf("the app of 2.0.0: %v", err)
	}
	cv2, err := contract.New(v2, "/v2")
	if err != nil {
		t.Fatal(err)
	}
	// do sends a request to the 2.0.0 app and checks its answer against
	// the 2.0.0 contract.
	do := func(method, path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer test-key-0123456789abcdef0123456789")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		for _, v := range cv2.Check(req, rec.Code, rec.Header(), rec.Body.Bytes()) {
			t.Errorf("%s %s: %d breaks the 2.0.0 contract: %v", method, path, rec.Code, v)
		}
		return rec
	}
	if rec := do(http.MethodPost, "/v2/pets", `{"name":"Rex","categoryId":1}`); rec.Code != http.StatusCreated || rec.Header().Get("Location") != "/v2/pets/1" {
		t.Errorf("POST /v2/pets: %d, Location %q; want 201, /v2/pets/1\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	if rec := do(http.MethodGet, "/v2/pets?limit=50", ""); rec.Code != http.StatusOK {
		t.Errorf("GET /v2/pets?limit=50: %d, want 200", rec.Code)
	}
	if rec := do(http.MethodGet, "/v2/pets?limit=51", ""); rec.Code != http.StatusBadRequest {
		t.Errorf("GET /v2/pets?limit=51: %d, want 400 (the new rule)", rec.Code)
	}
	for _, path := range []string{"/v1/pets", "/v1/pets/1"} {
		if rec := do(http.MethodGet, path, ""); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404 (2.0.0 serves /v2 only)", path, rec.Code)
		}
	}
}
