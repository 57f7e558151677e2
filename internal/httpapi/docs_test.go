package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/memstore"
)

// decodeDoc loads a JSON or YAML OpenAPI document with kin-openapi and
// returns it encoded canonically, so that two documents that say the same
// thing compare equal. (oapi-codegen embeds the spec as kin-openapi encodes
// it: `required: false` is left out and int64 bounds pass through float64.)
func decodeDoc(t *testing.T, what string, b []byte) string {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return string(out)
}

func TestServedSpec(t *testing.T) {
	c := newClient(t, memstore.New())
	c.Key = "" // the spec and the docs need no key
	disk, err := os.ReadFile("../../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := decodeDoc(t, "openapi.yaml", disk)
	embedded, err := gen.GetSpecJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, contentType string }{
		{"/openapi.json", "application/json"},
		{"/openapi.yaml", "application/yaml"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			res := c.Do(t, "GET", tc.path, "")
			if res.Status != http.StatusOK || res.Header.Get("Content-Type") != tc.contentType {
				t.Fatalf("got %d %q, want 200 %q", res.Status, res.Header.Get("Content-Type"), tc.contentType)
			}
			if tc.contentType == "application/json" {
				if !bytes.Equal(res.Body, embedded) {
					t.Errorf("body is not the embedded spec's bytes")
				}
				if !json.Valid(res.Body) {
					t.Errorf("body is not JSON")
				}
			} else if bytes.HasPrefix(bytes.TrimSpace(res.Body), []byte("{")) {
				t.Errorf("body is JSON in flow style, want block YAML: %.80s", res.Body)
			}
			if got := decodeDoc(t, tc.path, res.Body); got != want {
				t.Errorf("%s decodes to a document that differs from openapi.yaml", tc.path)
			}
		})
	}
}

func TestDocs(t *testing.T) {
	c := newClient(t, memstore.New())
	c.Key = ""
	res := c.Do(t, "GET", "/docs", "")
	if res.Status != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /docs: got %d %q, want 200 text/html", res.Status, res.Header.Get("Content-Type"))
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

	// The docs' copy of the spec puts this server first, so that "Try it
	// out" calls /v1 here; the rest is the contract.
	res = c.Do(t, "GET", "/docs/openapi.json", "")
	var docs map[string]any
	res.JSON(t, &docs)
	servers, _ := docs["servers"].([]any)
	first, _ := servers[0].(map[string]any)
	if len(servers) != 3 || first["url"] != "/v1" {
		t.Fatalf("docs spec servers: got %v, want /v1 first, then the contract's two", servers)
	}
	embedded, _ := gen.GetSpecJSON()
	var contract map[string]any
	if err := json.Unmarshal(embedded, &contract); err != nil {
		t.Fatal(err)
	}
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
