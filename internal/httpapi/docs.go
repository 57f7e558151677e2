package httpapi

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
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

	handler := v5emb.NewHandlerWithConfig(swgui.Config{
		Title:       "Pet Store API",
		SwaggerJSON: docsSpecPath,
		BasePath:    DocsPath + "/",
		SettingsUI: map[string]string{
			"defaultModelsExpandDepth": "1",    // show the schemas
			"displayOperationId":       "true", // listPets, createPet, getPet
		},
	})
	csp, err := docsPolicy(handler)
	if err != nil {
		return err
	}
	wrapped := echo.WrapHandler(handler)
	ui := func(c echo.Context) error {
		c.Response().Header().Set("Content-Security-Policy", csp)
		// The file server answers a byte range out of range, or a failed
		// If-Match or If-Unmodified-Since, in plain text (416, 412): the
		// assets are small and never change, so the whole asset is the
		// answer (a 304 for If-None-Match and If-Modified-Since stays).
		for _, h := range []string{"Range", "If-Range", "If-Match", "If-Unmodified-Since"} {
			c.Request().Header.Del(h)
		}
		return wrapped(c)
	}
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

// docsPolicy is the Content-Security-Policy of the docs: everything from
// this server only, nothing framed, no plugin, no form; the page's own
// inline scripts and style by their hashes (the page is the same on every
// request: it is rendered once here to hash them); images may be data:
// URLs, as Swagger UI's icons are; "Try it out" calls this server.
func docsPolicy(ui http.Handler) (string, error) {
	rec := httptest.NewRecorder()
	ui.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, DocsPath+"/", nil))
	page := rec.Body.String()
	scripts, styles := inlineHashes(page, "script"), inlineHashes(page, "style")
	if rec.Code != http.StatusOK || len(scripts) == 0 {
		return "", fmt.Errorf("docs: the page to hash: %d, %d inline scripts", rec.Code, len(scripts))
	}
	return "default-src 'none'; script-src 'self' " + strings.Join(scripts, " ") +
		"; style-src 'self' " + strings.Join(styles, " ") +
		"; img-src 'self' data:; font-src 'self'; connect-src 'self'; manifest-src 'self'" +
		"; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'", nil
}

// inlineHashes returns the CSP source of each inline element named tag in
// page ('sha256-…' of its text); elements with a src are not inline.
func inlineHashes(page, tag string) []string {
	var out []string
	open, end := "<"+tag, "</"+tag+">"
	for {
		i := strings.Index(page, open)
		if i < 0 {
			return out
		}
		page = page[i+len(open):]
		gt, stop := strings.IndexByte(page, '>'), strings.Index(page, end)
		if gt < 0 || stop < gt {
			return out
		}
		if attrs := page[:gt]; !strings.Contains(attrs, "src=") {
			sum := sha256.Sum256([]byte(page[gt+1 : stop]))
			out = append(out, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
		}
		page = page[stop+len(end):]
	}
}

// isAsset reports whether Swagger UI's embedded files hold name, as is or
// compressed, as a file: "." is their directory, which the file server
// would answer in plain text.
func isAsset(name string) bool {
	if name == "" || strings.Contains(name, "/") {
		return false
	}
	for _, n := range []string{name, name + ".gz"} {
		if fi, err := fs.Stat(static.FS, n); err == nil && fi.Mode().IsRegular() {
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
