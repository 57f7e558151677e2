package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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
