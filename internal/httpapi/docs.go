package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
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

// registerDocs serves openapi.yaml byte for byte as YAML and converted to
// JSON (integers exact), and Swagger UI, with its assets embedded in the
// binary, at DocsPath.
func registerDocs(e *echo.Echo) error {
	specYAML := gen.SpecYAML
	specJSON, err := yamlToJSON(specYAML)
	if err != nil {
		return fmt.Errorf("embedded spec to JSON: %w", err)
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

// yamlToJSON converts a YAML document to JSON with the same members in the
// same order. Integers are written as integers, exactly: none passes through
// float64, so 9223372036854775807 stays what it is.
func yamlToJSON(doc []byte) ([]byte, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(doc, &n); err != nil {
		return nil, err
	}
	if n.Kind != yaml.DocumentNode || len(n.Content) != 1 {
		return nil, errors.New("not one YAML document")
	}
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf, jsontext.Multiline(true), jsontext.WithIndent("  "))
	if err := writeJSON(enc, n.Content[0]); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeJSON writes the YAML node n as JSON tokens to enc.
func writeJSON(enc *jsontext.Encoder, n *yaml.Node) error {
	switch n.Kind {
	case yaml.AliasNode:
		return writeJSON(enc, n.Alias)
	case yaml.MappingNode:
		if err := enc.WriteToken(jsontext.BeginObject); err != nil {
			return err
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
				return fmt.Errorf("line %d: only scalar keys convert to JSON", k.Line)
			}
			if err := enc.WriteToken(jsontext.String(k.Value)); err != nil {
				return err
			}
			if err := writeJSON(enc, n.Content[i+1]); err != nil {
				return err
			}
		}
		return enc.WriteToken(jsontext.EndObject)
	case yaml.SequenceNode:
		if err := enc.WriteToken(jsontext.BeginArray); err != nil {
			return err
		}
		for _, c := range n.Content {
			if err := writeJSON(enc, c); err != nil {
				return err
			}
		}
		return enc.WriteToken(jsontext.EndArray)
	case yaml.ScalarNode:
		return enc.WriteToken(scalarToken(n))
	}
	return fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

// scalarToken is the JSON token of a YAML scalar, by its resolved tag.
// go-yaml decodes an integer into int64 or uint64 exactly; a timestamp or
// any other tag stays the string it is written as.
func scalarToken(n *yaml.Node) jsontext.Token {
	switch n.ShortTag() {
	case "!!null":
		return jsontext.Null
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return jsontext.Bool(b)
		}
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			return jsontext.Int(i)
		}
		var u uint64
		if n.Decode(&u) == nil {
			return jsontext.Uint(u)
		}
	case "!!float":
		var f float64
		if n.Decode(&f) == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return jsontext.Float(f)
		}
	}
	return jsontext.String(n.Value)
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
