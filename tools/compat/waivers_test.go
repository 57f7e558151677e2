package main

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// A waiver makes its change, and only its change, additive: the same change
// elsewhere, another change in the same place, or the same property changed
// to another value stays breaking, and the waiver is then reported unused.
func TestWaiverIsExact(t *testing.T) {
	base := realSpec(t)
	const to = `^[^\u0000-\u001F]*[^\u0000-\u0020][^\u0000-\u001F]*$`
	doc := loadDoc(t, base)
	name := doc.Components.Schemas["PetName"].Value
	from := name.Pattern
	name.Pattern = to
	v, _ := parseVersion(doc.Info.Version)
	doc.Info.Version = v.next(Minor).String()

	// Tightening PetName's pattern is four changes to oasdiff: the request
	// property, and the name in each response that carries a pet.
	exact := []Waiver{
		{ID: "request-property-pattern-changed", Where: "POST /pets", Args: []string{"name", from, to}, Reason: "request reason"},
		{ID: "response-property-pattern-changed", Where: "POST /pets", Args: []string{"name", from, to, "201"}, Reason: "response reason"},
		{ID: "response-property-pattern-changed", Where: "GET /pets", Args: []string{"items/name", from, to, "200"}, Reason: "response reason"},
		{ID: "response-property-pattern-changed", Where: "GET /pets/{petId}", Args: []string{"name", from, to, "200"}, Reason: "response reason"},
	}
	if r := compareWaived(t, base, doc, nil); r.Required != Major || r.OK() {
		t.Fatalf("without waivers: got %s, ok %v; want major, refused", r.Required, r.OK())
	}
	r := compareWaived(t, base, doc, exact)
	if r.Required != Minor || !r.OK() {
		t.Fatalf("with the exact waivers: got %s, problems %v; want minor, ok", r.Required, r.Problems)
	}
	waived := 0
	for _, c := range r.Changes {
		if c.Waived != "" {
			waived++
			if c.Raise != Minor || !strings.Contains(c.String(), "breaking by oasdiff, waived: "+c.Waived) {
				t.Errorf("waived change: %v", c)
			}
		}
	}
	if waived < 3 { // the response lines may merge
		t.Errorf("got %d waived lines, want the four changes: %v", waived, r.Changes)
	}
	log := changelog("", r, "v0", false)
	if !strings.Contains(log, "- **breaking by oasdiff, waived** `POST /pets`: changed the pattern of the request property `name`") ||
		!strings.Contains(log, "waived (released/waivers.yaml): request reason\n") {
		t.Errorf("changelog does not mark the waived change with its reason:\n%s", log)
	}

	for _, tc := range []struct {
		name   string
		change func(w *Waiver)
	}{
		{"another operation", func(w *Waiver) { w.Where = "PUT /pets" }},
		{"another id", func(w *Waiver) { w.ID = "request-property-pattern-removed" }},
		{"another property", func(w *Waiver) { w.Args[0] = "status" }},
		{"the pattern changed to another value", func(w *Waiver) { w.Args[2] = `^.+$` }},
		{"another old value", func(w *Waiver) { w.Args[1] = `^.*$` }},
		{"one argument short", func(w *Waiver) { w.Args = w.Args[:2] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := slices.Clone(exact)
			ws[0].Args = slices.Clone(ws[0].Args)
			tc.change(&ws[0])
			r := compareWaived(t, base, doc, ws)
			if r.Required != Major || r.OK() {
				t.Fatalf("got %s, problems %v; want the request change breaking", r.Required, r.Problems)
			}
			if !slices.ContainsFunc(r.Problems, func(p string) bool {
				return strings.Contains(p, "waiver "+ws[0].ID+" at "+ws[0].Where+" names no breaking change")
			}) {
				t.Errorf("the unmatched waiver is not reported: %v", r.Problems)
			}
		})
	}

	// The exact waivers do not carry another breaking change made with them.
	doc.Components.Parameters["Limit"].Value.Schema.Value.Max = ptr(50.0)
	if r := compareWaived(t, base, doc, exact); r.Required != Major || r.OK() {
		t.Errorf("another breaking change beside the waived ones: got %s, ok %v; want major, refused", r.Required, r.OK())
	}
}

func TestParseWaivers(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		n        int
		ok       bool
	}{
		{"empty file", "", 0, true},
		{"empty list", "# head\nwaivers: []\n", 0, true},
		{"shared by alias", "anchors:\n  r: &r because\nwaivers:\n  - {id: x, where: GET /pets, args: [a], reason: *r}\n", 1, true},
		{"no reason", "waivers:\n  - {id: x, where: GET /pets, args: [a]}\n", 0, false},
		{"no args", "waivers:\n  - {id: x, where: GET /pets, reason: r}\n", 0, false},
		{"unknown field", "waivers:\n  - {id: x, where: GET /pets, args: [a], reason: r, text: t}\n", 0, false},
	} {
		ws, err := ParseWaivers([]byte(tc.in))
		if (err == nil) != tc.ok || len(ws) != tc.n {
			t.Errorf("%s: got %d waivers, %v; want %d, ok %v", tc.name, len(ws), err, tc.n, tc.ok)
		}
	}
	// The project's own file parses.
	data, err := os.ReadFile("../../released/waivers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseWaivers(data); err != nil {
		t.Error(err)
	}
	// A release keeps the file's head and no entry.
	if got := string(emptyWaivers(data)); !strings.HasPrefix(got, "# ") || !strings.HasSuffix(got, "\nwaivers: []\n") || strings.Contains(got, "id:") {
		t.Errorf("after a release:\n%s", got)
	}
}

func compareWaived(t *testing.T, base []byte, rev *openapi3.T, waivers []Waiver) *Report {
	t.Helper()
	data, err := json.Marshal(rev)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Compare(base, data, waivers...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
