package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"
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

// make new-major (compat major) removes the waivers that name no change of
// the moved spec, and keeps the others, every other line of the file as
// it was. The spec removes Pet's name from every answer: a waiver for a
// change of that name's pattern names no change any more; the waiver of
// the removal itself still does.
func TestNewMajorDropsStaleWaivers(t *testing.T) {
	dir, _ := gateTree(t)
	base := realSpec(t)
	write(t, filepath.Join(dir, "released/openapi.yaml"), base)
	var doc yaml.Node
	if err := yaml.Unmarshal(base, &doc); err != nil {
		t.Fatal(err)
	}
	pet := lookup(&doc, "components", "schemas", "Pet")
	props, required := lookup(pet, "properties"), lookup(pet, "required")
	for i := 0; i+1 < len(props.Content); i += 2 {
		if props.Content[i].Value == "name" {
			props.Content = slices.Delete(props.Content, i, i+2)
			break
		}
	}
	required.Content = slices.DeleteFunc(required.Content, func(n *yaml.Node) bool { return n.Value == "name" })
	rev, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "openapi.yaml"), rev)

	r, err := Compare(base, rev)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(r.Unwaived, func(w Waiver) bool { return w.Where == "GET /pets/{petId}" && slices.Contains(w.Args, "name") })
	if i < 0 {
		t.Fatalf("no breaking change names the removed name at GET /pets/{petId}: %v", r.Unwaived)
	}
	live := r.Unwaived[i]
	t.Logf("the live waiver: %v", live)
	live.Reason = "the test's reason"
	stale := Waiver{ID: "response-property-pattern-changed", Where: "GET /pets/{petId}", Args: []string{"name", "^a+$", "^b+$", "200"}, Reason: live.Reason}
	quoted := func(args []string) string {
		q := make([]string, len(args))
		for i, a := range args {
			q[i] = strconv.Quote(a)
		}
		return strings.Join(q, ", ")
	}
	file := filepath.Join(dir, "released/waivers.yaml")
	write(t, file, []byte(fmt.Sprintf(`# The test's waivers: this comment stays.
anchors:
  reason: &reason the test's reason

waivers:
  # The name's pattern, before the name went: it names no change now.
  - id: %s
    where: %s
    args: [%s]
    reason: *reason

  # The removal itself: it still names a change.
  - id: %s
    where: %s
    args: [%s]
    reason: *reason
`, stale.ID, stale.Where, quoted(stale.Args), live.ID, live.Where, quoted(live.Args))))

	t.Chdir(".") // run moves to -dir; this puts the test back afterwards
	var out bytes.Buffer
	if err := run([]string{"major", "-dir", dir}, &out); err != nil {
		t.Fatalf("major: %v\n%s", err, &out)
	}
	if !strings.Contains(out.String(), "removed 1 waiver(s) that name no change of the new major:\n  response-property-pattern-changed at GET /pets/{petId} [name ^a+$ ^b+$ 200]\n") {
		t.Errorf("major does not say what it removed:\n%s", &out)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseWaivers(data)
	if err != nil || !reflect.DeepEqual(got, []Waiver{live}) {
		t.Errorf("waivers after the new major: %v %v; want only the live one, %v", got, err, live)
	}
	text := string(data)
	for _, want := range []string{"# The test's waivers: this comment stays.\n", "reason: &reason", "  # The removal itself: it still names a change.\n  - id: " + live.ID} {
		if !strings.Contains(text, want) {
			t.Errorf("the file lost %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "before the name went") {
		t.Errorf("the removed waiver's comment is left:\n%s", text)
	}
	moved, err := os.ReadFile(filepath.Join(dir, "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := Compare(base, moved, got...); err != nil || len(r.Stale) > 0 {
		t.Errorf("after the new major: %v, stale waivers %v", err, r.Stale)
	}

	// Again: nothing left to remove, the file untouched.
	out.Reset()
	if err := run([]string{"major", "-dir", dir}, &out); err != nil {
		t.Fatalf("major again: %v\n%s", err, &out)
	}
	if again, _ := os.ReadFile(file); !bytes.Equal(again, data) || strings.Contains(out.String(), "removed") {
		t.Errorf("major again changed the waivers:\n%s", &out)
	}
}

// dropWaivers keeps the entries it is not told to drop whatever the
// file's layout: a flow sequence, an anchor defined in a dropped entry,
// every entry dropped.
func TestDropWaivers(t *testing.T) {
	b := Waiver{ID: "b", Where: "GET /b", Args: []string{"y"}, Reason: "ra"}
	for name, file := range map[string]string{
		"flow":          "# head\nwaivers: [{id: a, where: GET /a, args: [x], reason: ra}, {id: b, where: GET /b, args: [y], reason: ra}]\n",
		"anchor":        "# head\nwaivers:\n  - id: a\n    where: GET /a\n    args: [x]\n    reason: &r ra\n  - id: b\n    where: GET /b\n    args: [y]\n    reason: *r\n",
		"block at zero": "# head\nwaivers:\n- id: a\n  where: GET /a\n  args: [x]\n  reason: ra\n- id: b\n  where: GET /b\n  args: [y]\n  reason: ra\n",
	} {
		out, err := dropWaivers([]byte(file), []int{0})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := ParseWaivers(out)
		if err != nil || !reflect.DeepEqual(got, []Waiver{b}) || !strings.HasPrefix(string(out), "# head\n") {
			t.Errorf("%s: got %v %v:\n%s", name, got, err, out)
		}
		if out, err := dropWaivers([]byte(file), []int{0, 1}); err != nil || string(out) != "# head\nwaivers: []\n" {
			t.Errorf("%s, both dropped: %v\n%s", name, err, out)
		}
		if out, err := dropWaivers([]byte(file), nil); err != nil || string(out) != file {
			t.Errorf("%s, none dropped: %v\n%s", name, err, out)
		}
	}
}
