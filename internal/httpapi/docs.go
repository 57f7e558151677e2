package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5/static"
	"github.com/swaggest/swgui/v5emb"
	"go.yaml.in/yaml/v3"

	"github.com/petstore/petstore/gen"
)

// Paths of the served contract and its documentation, outside BasePath and
// outside the contract, like /healthz. They need no key.
const (
	SpecJSONPath = "/openapi.json"
	SpecYAMLPath = "/openapi.yaml"
	DocsPath     = "/docs"
	// docsSpecPath is the spec as the docs page loads it: the embedded one
	// with this server first, so that "Try it out" calls this host's /v1.
	docsSpecPath = DocsPath + "/openapi.json"
)

// registerDocs serves the embedded spec as JSON (the exact embedded bytes)
// and as YAML (a conversion of the same document, member order kept), and
// Swagger UI, with its assets embedded in the binary, at DocsPath.
func registerDocs(e *echo.Echo) error {
	specJSON, err := gen.GetSpecJSON()
	if err != nil {
		return fmt.Errorf("embedded spec: %w", err)
	}
	specYAML, err := jsonToYAML(specJSON)
	if err != nil {
		return fmt.Errorf("embedded spec to YAML: %w", err)
	}
	docsSpec, err := withServerFirst(specJSON, BasePath, "This server: the host serving these docs")
	if err != nil {
		return fmt.Errorf("embedded spec for the docs: %w", err)
	}
	blob := func(contentType string, b []byte) echo.HandlerFunc {
		return func(c echo.Context) error { return c.Blob(http.StatusOK, contentType, b) }
	}
	e.GET(SpecJSONPath, blob(echo.MIMEApplicationJSON, specJSON))
	e.GET(SpecYAMLPath, blob("application/yaml", specYAML))
	e.GET(docsSpecPath, blob(echo.MIMEApplicationJSON, docsSpec))

	ui := echo.WrapHandler(v5emb.NewHandlerWithConfig(swgui.Config{
		Title:       "Pet Store API",
		SwaggerJSON: docsSpecPath,
		BasePath:    DocsPath + "/",
		SettingsUI: map[string]string{
			"defaultModelsExpandDepth": "1",    // show the schemas
			"displayOperationId":       "true", // listPets, createPet, getPet
		},
	}))
	e.GET(DocsPath, ui)
	e.GET(DocsPath+"/", ui)
	e.GET(DocsPath+"/:asset", func(c echo.Context) error {
		// Unknown assets are a 404 Error from the one mapper, not the
		// file server's text.
		name := c.Param("asset")
		if !isAsset(name) {
			return echo.ErrNotFound
		}
		return ui(c)
	})
	return nil
}

// isAsset reports whether Swagger UI's embedded files hold name, as is or
// compressed.
func isAsset(name string) bool {
	if name == "" || strings.Contains(name, "/") {
		return false
	}
	for _, n := range []string{name, name + ".gz"} {
		if _, err := fs.Stat(static.FS, n); err == nil {
			return true
		}
	}
	return false
}

// jsonToYAML converts a JSON document to block-style YAML with the same
// members in the same order and every scalar as written.
func jsonToYAML(doc []byte) ([]byte, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(doc, &n); err != nil {
		return nil, err
	}
	var plain func(*yaml.Node)
	plain = func(n *yaml.Node) {
		n.Style &^= yaml.FlowStyle
		if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
			n.Style = 0 // quoted only where YAML needs it
		}
		for _, c := range n.Content {
			plain(c)
		}
	}
	plain(&n)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// withServerFirst returns the JSON document doc with a server of url put
// before the ones it lists.
func withServerFirst(doc []byte, url, description string) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		return nil, err
	}
	var servers []json.RawMessage
	if raw, ok := m["servers"]; ok {
		if err := json.Unmarshal(raw, &servers); err != nil {
			return nil, err
		}
	}
	first, err := json.Marshal(map[string]any{"url": url, "description": description})
	if err != nil {
		return nil, err
	}
	if m["servers"], err = json.Marshal(append([]json.RawMessage{first}, servers...)); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}
