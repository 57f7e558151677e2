package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The edits are made as a person makes them in an editor: lines inserted
// where the YAML says they go (found by parsing the file), every other
// byte of the file kept as it was.

// insertion is text to put before a line of the file (0-based), indented
// by indent spaces.
type insertion struct {
	line   int
	indent int
	text   string
}

// memberEdit adds the member name, its schema in YAML, to the properties
// of NewPet and of Pet; defs are schemas to add under components.schemas,
// by name, in the same YAML form.
func memberEdit(spec []byte, name, schema string, defs map[string]string) ([]byte, error) {
	root, err := parse(spec)
	if err != nil {
		return nil, err
	}
	schemas := path(root, "components", "schemas")
	if schemas == nil || schemas.Kind != yaml.MappingNode {
		return nil, errors.New("no components.schemas")
	}
	var ins []insertion
	for _, owner := range []string{"NewPet", "Pet"} {
		props := path(schemas, owner, "properties")
		if props == nil || props.Kind != yaml.MappingNode || len(props.Content) == 0 || props.Style&yaml.FlowStyle != 0 {
			return nil, fmt.Errorf("components.schemas.%s.properties: not a block mapping with members", owner)
		}
		if path(props, name) != nil {
			return nil, fmt.Errorf("components.schemas.%s.properties already has %s", owner, name)
		}
		first := props.Content[0]
		ins = append(ins, insertion{line: first.Line - 1, indent: first.Column - 1, text: name + ":\n" + indentBy(schema, 2)})
	}
	first := schemas.Content[0]
	for def, text := range defs {
		if path(schemas, def) != nil {
			return nil, fmt.Errorf("components.schemas already has %s", def)
		}
		ins = append(ins, insertion{line: first.Line - 1, indent: first.Column - 1, text: def + ":\n" + indentBy(text, 2)})
	}
	return insert(spec, ins), nil
}

// enumEdit adds value to the enum of components.schemas.<schema>, written
// in flow style on one line or as a block sequence.
func enumEdit(spec []byte, schema, value string) ([]byte, error) {
	root, err := parse(spec)
	if err != nil {
		return nil, err
	}
	enum := path(root, "components", "schemas", schema, "enum")
	if enum == nil || enum.Kind != yaml.SequenceNode || len(enum.Content) == 0 {
		return nil, fmt.Errorf("components.schemas.%s.enum: not a sequence of values", schema)
	}
	for _, v := range enum.Content {
		if v.Value == value {
			return nil, fmt.Errorf("components.schemas.%s.enum already has %s", schema, value)
		}
	}
	last := enum.Content[len(enum.Content)-1]
	lines := bytes.SplitAfter(spec, []byte("\n"))
	if enum.Style&yaml.FlowStyle == 0 {
		return insert(spec, []insertion{{line: last.Line, indent: last.Column - 3, text: "- " + value + "\n"}}), nil
	}
	if last.Line != enum.Line {
		return nil, fmt.Errorf("components.schemas.%s.enum: a flow sequence over several lines", schema)
	}
	l := lines[enum.Line-1]
	end := bytes.LastIndexByte(l, ']')
	if end < 0 {
		return nil, fmt.Errorf("components.schemas.%s.enum: no ] on line %d", schema, enum.Line)
	}
	lines[enum.Line-1] = append(append(append([]byte{}, l[:end]...), ", "+value...), l[end:]...)
	return bytes.Join(lines, nil), nil
}

func parse(spec []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(spec, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, errors.New("not one YAML document")
	}
	return doc.Content[0], nil
}

// path is the value at the keys under n, or nil.
func path(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
				break
			}
		}
		n = next
	}
	return n
}

// insert puts each insertion's text before its line, indented.
func insert(spec []byte, ins []insertion) []byte {
	lines := bytes.SplitAfter(spec, []byte("\n"))
	before := map[int][]byte{}
	for _, in := range ins {
		before[in.line] = append(before[in.line], indentBy(in.text, in.indent)...)
	}
	var out bytes.Buffer
	for i, l := range lines {
		out.Write(before[i])
		out.Write(l)
	}
	return out.Bytes()
}

// indentBy indents every non-empty line of text by n spaces, and ends it
// with a newline.
func indentBy(text string, n int) string {
	var b strings.Builder
	for l := range strings.Lines(strings.Trim(text, "\n") + "\n") {
		if strings.TrimSpace(l) != "" {
			b.WriteString(strings.Repeat(" ", n))
		}
		b.WriteString(l)
	}
	return b.String()
}

// operationEdit adds the operation method, its YAML, to the path item of
// route, after the item's operations: before the line of the next path, or
// of the key after paths when route is the last.
func operationEdit(spec []byte, route, method, op string) ([]byte, error) {
	root, err := parse(spec)
	if err != nil {
		return nil, err
	}
	paths := path(root, "paths")
	item := path(paths, route)
	if item == nil || item.Kind != yaml.MappingNode || len(item.Content) == 0 || item.Style&yaml.FlowStyle != 0 {
		return nil, fmt.Errorf("paths.%s: not a block mapping with operations", route)
	}
	if path(item, method) != nil {
		return nil, fmt.Errorf("paths.%s already has %s", route, method)
	}
	end := after(paths, route)
	if end == nil {
		end = after(root, "paths")
	}
	if end == nil {
		return nil, errors.New("paths is the last key of the file: nothing to insert before")
	}
	first := item.Content[0]
	return insert(spec, []insertion{{line: end.Line - 1, indent: first.Column - 1, text: method + ":\n" + indentBy(op, 2)}}), nil
}

// after is the key node that follows key in the mapping n, or nil.
func after(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+3 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+2]
		}
	}
	return nil
}
