package main

import (
	"bytes"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// realSpec is the repository's openapi.yaml as a 1.x contract: the gate's
// tests make their changes to what the repository's contract says, and
// state the version rule's answers for a 1.x release (2.0.0 and /v2 next).
// At 1.x the file is returned as it is; a tree that make new-major moved to
// N.0.0 has its base path moved back to /v1 and info.version set to 1.0.0,
// so that the same tests hold there.
func realSpec(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("../../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := loadDoc(t, data)
	v, err := parseVersion(doc.Info.Version)
	if err != nil {
		t.Fatal(err)
	}
	if v.major == 1 {
		return data
	}
	data, err = setVersion(data, lookup(parseNode(t, data), "info", "version"), "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	return replaceBase(data, basePath(doc), "/v1")
}

// lineOf is the 1-based line of the first line of data containing s.
func lineOf(t *testing.T, data []byte, s string) int {
	t.Helper()
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	t.Fatalf("no line contains %q", s)
	return 0
}

// A new major whose spec still names the old base path is refused, and
// each place is named with its line: a pattern, an enum, an example, a
// description. Moving only info.version and the servers is not enough.
func TestGateNamesTheOldBasePath(t *testing.T) {
	base := realSpec(t)
	rev := regexp.MustCompile(`(?m)^  version: .*$`).ReplaceAll(base, []byte("  version: 2.0.0"))
	rev = regexp.MustCompile(`(?m)^(  - url: https://\S+)/v1$`).ReplaceAll(rev, []byte("${1}/v2"))
	// An example naming the old path, and two names that only look like it.
	const location = "                pattern: '^/v1/pets/[1-9][0-9]{0,18}$'\n"
	if !bytes.Contains(rev, []byte(location)) {
		t.Fatalf("openapi.yaml has no %q", location)
	}
	rev = bytes.Replace(rev, []byte(location), []byte(location+
		"                example: /v1/pets/7\n"+
		"                x-not-the-base: [/v10/pets, /v1beta/pets]\n"), 1)

	r, err := Compare(base, rev)
	if err != nil {
		t.Fatal(err)
	}
	if r.OK() {
		t.Fatalf("2.0.0 with /v1 left in the spec: ok, want refused")
	}
	if len(r.Problems) > 0 {
		t.Errorf("the version rule itself holds (2.0.0, servers at /v2); got problems %v", r.Problems)
	}
	if r.OldBasePath != "/v1" {
		t.Errorf("OldBasePath %q, want /v1", r.OldBasePath)
	}
	got := map[string]int{}
	for _, p := range r.Leftovers {
		got[p.Path] = p.Line
	}
	for path, text := range map[string]string{
		"paths./pets.post.responses.201.headers.Location.schema.pattern": "pattern: '^/v1/pets/",
		"paths./pets.post.responses.201.headers.Location.schema.example": "example: /v1/pets/7",
		"components.headers.NextLink.description":                        "follow: `</v1/pets?after=",
		"components.headers.NextLink.schema.pattern":                     "pattern: '^</v1/pets",
		"components.headers.SuccessorLink.description":                   "description: 'The successor of this operation: `</v1/pets>",
		"components.headers.SuccessorLink.schema.enum[0]":                "enum: ['</v1/pets>",
	} {
		line, ok := got[path]
		if !ok {
			t.Errorf("%s is not named; the gate named %v", path, r.Leftovers)
			continue
		}
		// A block scalar's line is its first line, the "|".
		if want := lineOf(t, rev, text); line != want && !(strings.HasSuffix(path, "description") && line < want && want-line <= 2) {
			t.Errorf("%s: line %d, want %d", path, line, want)
		}
		delete(got, path)
	}
	for path := range got {
		t.Errorf("named %s, which does not name /v1", path)
	}
	// The move itself is breaking, and the changelog says so.
	i := slices.IndexFunc(r.Changes, func(c Change) bool { return c.Where == "servers" })
	if i < 0 || r.Changes[i].Raise != Major || !strings.Contains(r.Changes[i].Text, "the base path moved from `/v1` to `/v2`") {
		t.Errorf("no breaking change for the base path's move: %v", r.Changes)
	}
	if log := changelog("", r, "v0", false); !strings.Contains(log, "- **breaking** `servers`: the base path moved from `/v1` to `/v2`") {
		t.Errorf("the changelog does not name the move:\n%s", log)
	}
}

// make new-major (compat major) moves the spec to 2.0.0 and /v2 everywhere
// and changes nothing else: the gate then accepts it, and the one breaking
// change it reports is the move itself.
func TestMoveMajor(t *testing.T) {
	data := realSpec(t)
	base := loadDoc(t, data)
	out, v, places, err := moveMajor(data, base)
	if err != nil {
		t.Fatal(err)
	}
	if v != "2.0.0" || !bytes.Contains(out, []byte("\n  version: 2.0.0\n")) {
		t.Errorf("version %s; want 2.0.0 in info.version", v)
	}
	if left := namesOf(parseNode(t, out), "/v1"); len(left) > 0 {
		t.Errorf("/v1 left after the move: %v", left)
	}
	if len(places) < 7 { // two servers, Location, NextLink (2), SuccessorLink (2)
		t.Errorf("moved %d places, want at least 7: %v", len(places), places)
	}
	// Line for line the same file, but for the version and the moved lines.
	was, now := strings.Split(string(data), "\n"), strings.Split(string(out), "\n")
	if len(was) != len(now) {
		t.Fatalf("%d lines, was %d: the layout changed", len(now), len(was))
	}
	changed := 0
	for i := range was {
		if was[i] != now[i] {
			changed++
			if strings.ReplaceAll(was[i], "/v1", "/v2") != now[i] && !strings.HasPrefix(now[i], "  version: ") {
				t.Errorf("line %d: %q became %q", i+1, was[i], now[i])
			}
		}
	}
	if changed != len(places)+1 {
		t.Errorf("%d lines changed, want %d (the places and the version)", changed, len(places)+1)
	}
	r, err := Compare(data, out)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.Required != Major {
		t.Errorf("after the move: ok %v, %s raise, problems %v %v; want ok, major", r.OK(), r.Required, r.Problems, r.Leftovers)
	}
	for _, c := range r.Changes {
		if c.Raise == Major && c.Where != "servers" {
			t.Errorf("a breaking change besides the move: %v", c)
		}
	}
	// Twice is refused: 3.0.0 is not the next major after the release 1.x.
	if _, _, _, err := moveMajor([]byte(strings.Replace(string(out), "version: 2.0.0", "version: 3.0.0", 1)), base); err == nil {
		t.Errorf("moving past the next major: no error")
	}
	// Again at 2.0.0 it is a no-op: the move is done.
	again, _, places, err := moveMajor(out, base)
	if err != nil || !bytes.Equal(again, out) || len(places) != 0 {
		t.Errorf("moving again: %v, %d places, changed %v", err, len(places), !bytes.Equal(again, out))
	}
}

func TestPathRE(t *testing.T) {
	re := pathRE("/v1")
	for s, want := range map[string]bool{
		"https://x.example.com/v1": true, "^/v1/pets": true, "</v1/pets>": true, "under /v1.": true, "`/v1`": true,
		"/v10": false, "/v1beta": false, "/v2/pets": false, "/v1_x": false,
	} {
		if re.MatchString(s) != want {
			t.Errorf("%q: match %v, want %v", s, !want, want)
		}
	}
}

// A spec without info is refused with an error naming what is missing.
func TestMoveMajorWithoutInfo(t *testing.T) {
	data := realSpec(t)
	base := loadDoc(t, data)
	noInfo := regexp.MustCompile(`(?m)^info:\n(  .*\n|\n)*`).ReplaceAll(data, nil)
	if bytes.Contains(noInfo, []byte("\ninfo:")) || bytes.Equal(noInfo, data) {
		t.Fatal("could not take info out of openapi.yaml")
	}
	if _, _, _, err := moveMajor(noInfo, base); err == nil || err.Error() != "no info.version in the document" {
		t.Errorf("a spec without info: %v, want no info.version in the document", err)
	}
}

// parseNode parses the YAML (or JSON) text data.
func parseNode(t *testing.T, data []byte) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return &doc
}
