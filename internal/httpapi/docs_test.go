package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/memstore"
)

// decodeDoc loads a JSON or YAML OpenAPI document with kin-openapi and
// checks that it is a valid OpenAPI document.
func decodeDoc(t *testing.T, what string, b []byte) {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// sameValue reports where the JSON value j (decoded with UseNumber) differs
// from the YAML value y (decoded by go-yaml, integers as int or uint64):
// "" when they are the same, integers compared digit for digit.
func sameValue(path string, y, j any) string {
	switch y := y.(type) {
	case map[string]any:
		jm, ok := j.(map[string]any)
		if !ok || len(jm) != len(y) {
			return fmt.Sprintf("%s: got %.80v, want an object of %d members", path, j, len(y))
		}
		for k, v := range y {
			if d := sameValue(path+"/"+k, v, jm[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		ja, ok := j.([]any)
		if !ok || len(ja) != len(y) {
			return fmt.Sprintf("%s: got %.80v, want an array of %d", path, j, len(y))
		}
		for i := range y {
			if d := sameValue(fmt.Sprintf("%s/%d", path, i), y[i], ja[i]); d != "" {
				return d
			}
		}
		return ""
	case int, int64, uint64:
		if n, ok := j.(json.Number); !ok || string(n) != fmt.Sprint(y) {
			return fmt.Sprintf("%s: got %v, want the integer %d", path, j, y)
		}
		return ""
	case float64:
		n, ok := j.(json.Number)
		if f, err := n.Float64(); !ok || err != nil || f != y {
			return fmt.Sprintf("%s: got %v, want the number %v", path, j, y)
		}
		return ""
	}
	if !reflect.DeepEqual(y, j) {
		return fmt.Sprintf("%s: got %#.80v, want %#.80v", path, j, y)
	}
	return ""
}

func TestServedSpec(t *testing.T) {
	c := newClient(t, memstore.New())
	c.Key = "" // the spec and the docs need no key
	disk, err := os.ReadFile("../../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}

	res := c.Do(t, "GET", "/openapi.yaml", "")
	if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "application/yaml" {
		t.Fatalf("GET /openapi.yaml: got %d %q, want 200 application/yaml", res.Status, res.Header.Get("Content-Type"))
	}
	if !bytes.Equal(res.Body, disk) {
		t.Errorf("GET /openapi.yaml: body is not openapi.yaml byte for byte (%d bytes, want %d)", len(res.Body), len(disk))
	}

	res = c.Do(t, "GET", "/openapi.json", "")
	if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi.json: got %d %q, want 200 application/json", res.Status, res.Header.Get("Content-Type"))
	}
	decodeDoc(t, "/openapi.json", res.Body)
	var want any
	if err := yaml.Unmarshal(disk, &want); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(res.Body))
	dec.UseNumber()
	var got any
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("GET /openapi.json: %v", err)
	}
	if d := sameValue("", want, got); d != "" {
		t.Errorf("GET /openapi.json differs from openapi.yaml at %s", d)
	}
	// The int64 bounds (After, PetId, CategoryId, Pet.id), which kin-openapi
	// turns into 9223372036854776000.
	maxInt64 := []byte("9223372036854775807")
	if n, want := bytes.Count(res.Body, maxInt64), bytes.Count(disk, maxInt64); n != want || want < 4 {
		t.Errorf("GET /openapi.json: %d bounds of %s, want %d as in openapi.yaml (at least 4)", n, maxInt64, want)
	}
}

func TestSameValueCatches(t *testing.T) {
	// The comparison is only as good as the differences it sees.
	for _, tc := range []struct{ yaml, json string }{
		{"a: 9223372036854775807", `{"a":9223372036854776000}`},
		{"a: 9223372036854775807", `{"a":9.223372036854775807e18}`},
		{"a: 1", `{"a":"1"}`},
		{"a: 1.5", `{"a":1}`},
		{"a: [1, 2]", `{"a":[2,1]}`},
		{"a: {b: c}", `{"a":{"b":"c","d":null}}`},
		{"required: false", `{}`},
		{"a: 'true'", `{"a":true}`},
	} {
		var y, j any
		if err := yaml.Unmarshal([]byte(tc.yaml), &y); err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(strings.NewReader(tc.json))
		dec.UseNumber()
		if err := dec.Decode(&j); err != nil {
			t.Fatal(err)
		}
		if sameValue("", y, j) == "" {
			t.Errorf("%s and %s: no difference found", tc.yaml, tc.json)
		}
	}
}

func TestDocs(t *testing.T) {
	c := newClient(t, memstore.New())
	c.Key = ""
	res := c.Do(t, "GET", "/docs", "")
	if res.Status != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /docs: got %d %q, want 200 text/html", res.Status, res.Header.Get("Content-Type"))
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'none'; script-src 'self' 'sha256-") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("GET /docs: Content-Security-Policy %q, want one from default-src 'none', its inline scripts by hash (make test-browser runs the page under it)", csp)
	}
	page := string(res.Body)
	for _, want := range []string{"swagger-ui", "/docs/openapi.json", "/docs/swagger-ui-bundle.js"} {
		if !strings.Contains(page, want) {
			t.Errorf("GET /docs: page lacks %q", want)
		}
	}
	for _, asset := range []string{"swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "swagger-ui.css", "favicon-32x32.png"} {
		res := c.Do(t, "GET", "/docs/"+asset, "", "Accept-Encoding", "gzip")
		if res.Status != http.StatusOK || len(res.Body) == 0 {
			t.Errorf("GET /docs/%s: got %d, %d bytes; want 200 and the embedded file", asset, res.Status, len(res.Body))
		}
	}

	// A byte range is not served, nor a precondition that could fail
	// (net/http answers 416 and 412 in plain text): the whole asset is the
	// answer.
	for _, h := range [][2]string{{"Range", "bytes=99999999-"}, {"Range", "bytes=0-9"}, {"If-Match", `"nope"`}, {"If-Unmodified-Since", "Mon, 01 Jan 2001 00:00:00 GMT"}} {
		if res := c.Do(t, "GET", "/docs/favicon-32x32.png", "", h[0], h[1]); res.Status != http.StatusOK || len(res.Body) < 100 {
			t.Errorf("GET /docs/favicon-32x32.png, %s: %s: got %d, %d bytes; want 200 and the whole file", h[0], h[1], res.Status, len(res.Body))
		}
	}

	// The docs' copy of the spec puts this server first, so that "Try it
	// out" calls the base path here; the rest is the contract.
	res = c.Do(t, "GET", "/docs/openapi.json", "")
	var docs map[string]any
	res.JSON(t, &docs)
	servers, _ := docs["servers"].([]any)
	first, _ := servers[0].(map[string]any)
	if len(servers) != 3 || first["url"] != apitest.Base() {
		t.Fatalf("docs spec servers: got %v, want %s first, then the contract's two", servers, apitest.Base())
	}
	var contract map[string]any
	c.Do(t, "GET", "/openapi.json", "").JSON(t, &contract)
	docs["servers"] = servers[1:]
	if !reflect.DeepEqual(docs, contract) {
		t.Errorf("docs spec differs from the embedded one beyond the added server")
	}

	// Outside the contract, errors still leave as Error bodies (apitest
	// checks every 4xx).
	for _, tc := range []struct {
		method, path string
		status       int
		code         gen.ErrorCode
	}{
		{"GET", "/docs/nope.js", 404, gen.ErrorCodeNotFound},
		{"GET", "/docs/.", 404, gen.ErrorCodeNotFound}, // the assets' directory
		{"GET", "/docs/%2e", 404, gen.ErrorCodeNotFound},
		{"GET", "/docs/../go.mod", 404, gen.ErrorCodeNotFound},
		{"GET", "/docs/a/b", 404, gen.ErrorCodeNotFound},
		{"GET", "/openapi.yml", 404, gen.ErrorCodeNotFound},
		{"POST", "/docs", 405, gen.ErrorCodeMethodNotAllowed},
		{"DELETE", "/docs/swagger-ui.css", 405, gen.ErrorCodeMethodNotAllowed},
		{"POST", "/openapi.json", 405, gen.ErrorCodeMethodNotAllowed},
		{"PUT", "/openapi.yaml", 405, gen.ErrorCodeMethodNotAllowed},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			wantError(t, c.Do(t, tc.method, tc.path, ""), tc.status, tc.code, "")
		})
	}
}
