// Command specjson writes the JSON form of an OpenAPI document written in
// YAML: the same members in the same order, indented, integers exact (none
// passes through float64, so 9223372036854775807 stays what it is). `make
// generate` runs it (gen/generate.go) to write gen/openapi.json, which the
// server embeds and serves as /openapi.json.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"

	"github.com/go-json-experiment/json/jsontext"
	"go.yaml.in/yaml/v3"
)

func main() {
	in := flag.String("in", "openapi.yaml", "the YAML document")
	out := flag.String("out", "openapi.json", "where to write its JSON form")
	flag.Parse()
	if err := convert(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "specjson:", err)
		os.Exit(1)
	}
}

func convert(in, out string) error {
	doc, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	j, err := yamlToJSON(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	return os.WriteFile(out, j, 0o644)
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
