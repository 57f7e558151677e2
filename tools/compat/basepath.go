package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"
)

// basePath is the path every servers URL of spec ends with ("/v1" for
// https://petstore.example.com/v1): the server serves its operations under
// it. It is "" without servers, or when they disagree.
func basePath(spec *openapi3.T) string {
	path := ""
	for i, s := range spec.Servers {
		u, err := url.Parse(s.URL)
		if err != nil {
			return ""
		}
		p := strings.TrimSuffix(u.Path, "/")
		if i > 0 && p != path {
			return ""
		}
		path = p
	}
	return path
}

// Place is where a document names something: its line, and the path of the
// member in the document ("paths./pets.post.responses.201.headers.Location.schema.pattern").
type Place struct {
	Line  int
	Path  string
	Value string
}

func (p Place) String() string {
	v := p.Value
	if len(v) > 80 {
		v = v[:77] + "..."
	}
	return fmt.Sprintf("line %d: %s: %q", p.Line, p.Path, v)
}

// pathRE matches base path as a whole path prefix: /v1 in "^/v1/pets",
// "</v1/pets>" or "…example.com/v1", not in "/v10" or "/v1beta".
func pathRE(base string) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(base) + `($|[^A-Za-z0-9_~-])`)
}

// namesOf lists every place in the parsed YAML (or JSON) document doc whose
// text, or whose member name, contains the base path old: patterns, enums,
// examples, descriptions, servers. A new major's contract must name only
// its own base path: the server answers under it, so a pattern or an enum
// still naming the old one is broken by the server's own answers.
func namesOf(doc *yaml.Node, old string) []Place {
	if old == "" {
		return nil
	}
	re := pathRE(old)
	var places []Place
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := join(path, k.Value)
				if re.MatchString(k.Value) {
					places = append(places, Place{k.Line, p, k.Value})
				}
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, path+"["+strconv.Itoa(i)+"]")
			}
		case yaml.ScalarNode:
			if re.MatchString(n.Value) {
				places = append(places, Place{n.Line, path, n.Value})
			}
		}
	}
	walk(doc, "")
	return places
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// moveMajor rewrites the contract data for the next major after the release
// base: info.version becomes MAJOR.0.0 and the base path /vN becomes
// /vMAJOR wherever the document names it (servers, patterns, enums,
// examples, descriptions). The text is edited in place, so the file keeps
// its layout and comments. It returns the new text, the new version, and
// the places it moved.
func moveMajor(data []byte, base *openapi3.T) ([]byte, string, []Place, error) {
	b, err := parseVersion(base.Info.Version)
	if err != nil {
		return nil, "", nil, fmt.Errorf("released contract: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, "", nil, err
	}
	version := lookup(&doc, "info", "version")
	if version == nil || version.Kind != yaml.ScalarNode {
		return nil, "", nil, errors.New("no info.version in the document")
	}
	r, err := parseVersion(version.Value)
	if err != nil {
		return nil, "", nil, err
	}
	want := b.next(Major)
	if r.compare(want) > 0 {
		return nil, "", nil, fmt.Errorf("info.version %s is already past %s, the next major after the released %s", r, want, b)
	}
	old := basePath(base)
	if !strings.HasSuffix(old, fmt.Sprintf("/v%d", b.major)) {
		return nil, "", nil, fmt.Errorf("the released contract's base path %q does not end with /v%d", old, b.major)
	}
	moved := strings.TrimSuffix(old, fmt.Sprintf("/v%d", b.major)) + fmt.Sprintf("/v%d", want.major)
	places := namesOf(&doc, old)
	// The version first: setVersion edits it where the parser found it in
	// data, which the base path's replacement may shift.
	out, err := setVersion(data, version, want.String())
	if err != nil {
		return nil, "", nil, err
	}
	return replaceBase(out, old, moved), want.String(), places, nil
}

// replaceBase replaces the base path old by moved wherever data names it
// as a whole path prefix (pathRE).
func replaceBase(data []byte, old, moved string) []byte {
	re := pathRE(old)
	for range 2 { // /v1/v1/v1: a match eats the next one's slash; a second pass takes it
		data = re.ReplaceAll(data, []byte(strings.ReplaceAll(moved, "$", "$$")+"${1}"))
	}
	return data
}

// setVersion replaces the value of n, info.version as parsed from the YAML
// text data, with v.
func setVersion(data []byte, n *yaml.Node, v string) ([]byte, error) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	line := lines[n.Line-1]
	col := n.Column - 1
	if col > len(line) {
		return nil, fmt.Errorf("line %d: info.version not where the parser says", n.Line)
	}
	quote := ""
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		quote = string(line[col])
	}
	old := quote + n.Value + quote
	if !bytes.HasPrefix(line[col:], []byte(old)) {
		return nil, fmt.Errorf("line %d: info.version is not written as %s", n.Line, old)
	}
	lines[n.Line-1] = append(append(append([]byte{}, line[:col]...), quote+v+quote...), line[col+len(old):]...)
	return bytes.Join(lines, nil), nil
}

// lookup follows mapping keys from a document node.
func lookup(n *yaml.Node, keys ...string) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, k := range keys {
		if n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}
