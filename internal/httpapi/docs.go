package httpapi

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5/static"
	"github.com/swaggest/swgui/v5emb"

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

// registerDocs serves openapi.yaml byte for byte as YAML and in its JSON
// form (gen.SpecJSON, written at make generate), and Swagger UI, with its
// assets embedded in the binary, at DocsPath.
func registerDocs(e *echo.Echo, base string) error {
	specYAML, specJSON := gen.SpecYAML, gen.SpecJSON
	docsSpec, err := withServerFirst(specJSON, base, "This server: the host serving these docs")
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
