package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/oasdiff/oasdiff/checker"
	"go.yaml.in/yaml/v3"
)

// Waiver accepts one change that oasdiff calls breaking as additive (a minor
// raise), because the project has judged that it breaks no client of the
// release: a tightened rule the server already enforced in other words, say.
// It names the change exactly: oasdiff's id, the operation, and every
// argument of the change (property, old and new value, status), so that
// another change, or the same change made again differently, is not waived.
type Waiver struct {
	ID     string   `yaml:"id"`     // oasdiff's change id
	Where  string   `yaml:"where"`  // the operation, as the gate prints it: "POST /pets"
	Args   []string `yaml:"args"`   // the change's arguments, all of them, in oasdiff's order
	Reason string   `yaml:"reason"` // why no client breaks; the changelog prints it
}

// ParseWaivers reads a waivers file: a YAML document with a list "waivers"
// and, for the entries to share by alias, a free map "anchors".
func ParseWaivers(data []byte) ([]Waiver, error) {
	var f struct {
		Anchors any      `yaml:"anchors"` // values the entries share by YAML alias
		Waivers []Waiver `yaml:"waivers"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) { // io.EOF: an empty file, no waiver
		return nil, fmt.Errorf("waivers: %w", err)
	}
	for i, w := range f.Waivers {
		if w.ID == "" || w.Where == "" || len(w.Args) == 0 || strings.TrimSpace(w.Reason) == "" {
			return nil, fmt.Errorf("waivers: entry %d: id, where, args and reason are all required", i+1)
		}
	}
	return f.Waivers, nil
}

// matches reports whether w names exactly the change c found at where.
func (w *Waiver) matches(c checker.Change, where string) bool {
	args := c.GetArgs()
	if c.GetId() != w.ID || where != w.Where || len(args) != len(w.Args) {
		return false
	}
	for i, a := range args {
		if fmt.Sprint(a) != w.Args[i] {
			return false
		}
	}
	return true
}

// emptyWaivers is the waivers file after a release: the file's leading
// comment kept, no entry (a waiver holds against one release only).
func emptyWaivers(old []byte) []byte {
	var head []byte
	for line := range bytes.Lines(old) {
		if !bytes.HasPrefix(line, []byte("#")) {
			break
		}
		head = append(head, line...)
	}
	return append(head, "waivers: []\n"...)
}

// dropWaivers is the waivers file data without the entries of indexes
// drop (of ParseWaivers' list), every other line as it was: each dropped
// entry's lines go, with the comment lines right above it. Where the file
// is laid out otherwise than one entry a block (a flow sequence, say), or
// a dropped entry defines an anchor a kept one uses, the kept entries are
// written anew under the file's leading comment instead. No entry left:
// the file as a release leaves it (emptyWaivers).
func dropWaivers(data []byte, drop []int) ([]byte, error) {
	all, err := ParseWaivers(data)
	if err != nil {
		return nil, err
	}
	var kept []Waiver
	for i, w := range all {
		if !slices.Contains(drop, i) {
			kept = append(kept, w)
		}
	}
	if len(kept) == len(all) {
		return data, nil
	}
	if len(kept) == 0 {
		return emptyWaivers(data), nil
	}
	if out, ok := cutEntries(data, drop); ok {
		if got, err := ParseWaivers(out); err == nil && reflect.DeepEqual(got, kept) {
			return out, nil
		}
	}
	list, err := yaml.Marshal(map[string][]Waiver{"waivers": kept})
	if err != nil {
		return nil, err
	}
	return append(bytes.TrimSuffix(emptyWaivers(data), []byte("waivers: []\n")), list...), nil
}

// cutEntries removes the lines of the entries of indexes drop from the
// block sequence "waivers" of data; ok is false where data does not lay
// them out one block an entry.
func cutEntries(data []byte, drop []int) (out []byte, ok bool) {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil, false
	}
	seq := lookup(&doc, "waivers")
	if seq == nil || seq.Kind != yaml.SequenceNode || seq.Style&yaml.FlowStyle != 0 {
		return nil, false
	}
	lines := strings.SplitAfter(string(data), "\n")
	cut := make([]bool, len(lines))
	for _, i := range drop {
		item := seq.Content[i]
		dash := item.Column - 3 // "- " before the entry's first key, 0-based
		if dash < 0 || !strings.HasPrefix(lines[item.Line-1][dash:], "- ") {
			return nil, false
		}
		start, end := item.Line-1, item.Line
		for start > 0 && strings.HasPrefix(strings.TrimSpace(lines[start-1]), "#") {
			start--
		}
		// The entry goes on while its lines are indented past its dash.
		for end < len(lines) && (strings.TrimSpace(lines[end]) == "" || indent(lines[end]) > dash) {
			end++
		}
		for end > item.Line && strings.TrimSpace(lines[end-1]) == "" {
			end-- // blank lines after it stay
		}
		for l := start; l < end; l++ {
			cut[l] = true
		}
	}
	var b strings.Builder
	for l, line := range lines {
		if !cut[l] {
			b.WriteString(line)
		}
	}
	return []byte(b.String()), true
}

// indent is the number of spaces line begins with.
func indent(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }
