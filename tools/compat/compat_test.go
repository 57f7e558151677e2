package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// The proof that the gate works: each change of issue 9 applied to a copy of
// the contract, with the raise it needs. For every row the gate must refuse
// the change under the base's version, naming it, and accept it under the
// smallest version that carries it.
func TestGate(t *testing.T) {
	base := realSpec(t)

	tests := []struct {
		name   string
		change func(*openapi3.T)
		want   Raise
		// names is what the gate's text for the change must contain.
		names string
	}{
		// Breaking.
		{"limit maximum 100 to 50", func(d *openapi3.T) {
			d.Components.Parameters["Limit"].Value.Schema.Value.Max = ptr(50.0)
		}, Major, "`limit`, the max was decreased"},
		{"categoryId int64 to string", func(d *openapi3.T) {
			s := d.Components.Schemas["CategoryId"].Value
			s.Type, s.Format, s.Min, s.Max = &openapi3.Types{"string"}, "", nil, nil
		}, Major, "categoryId"},
		{"status enum loses sold", func(d *openapi3.T) {
			d.Components.Schemas["PetStatus"].Value.Enum = []any{"available", "pending"}
		}, Major, "sold"},
		{"new required member in NewPet", func(d *openapi3.T) {
			s := d.Components.Schemas["NewPet"].Value
			s.Properties["breed"] = openapi3.NewSchemaRef("", openapi3.NewStringSchema())
			s.Required = append(s.Required, "breed")
		}, Major, "breed"},
		{"200 of listPets removed", func(d *openapi3.T) {
			d.Paths.Value("/pets").Get.Responses.Delete("200")
		}, Major, "200"},
		{"petId made a query parameter", func(d *openapi3.T) {
			d.Components.Parameters["PetId"].Value.In = openapi3.ParameterInQuery
		}, Major, "petId"},
		{"new value in a response enum other than Error.code", func(d *openapi3.T) {
			// Pet.status in responses shares PetStatus with requests: only
			// the error code is declared open (errorCodeAdded).
			s := d.Components.Schemas["Pet"].Value.Properties["status"]
			d.Components.Schemas["Pet"].Value.Properties["status"] = openapi3.NewSchemaRef("", &openapi3.Schema{
				Type: s.Value.Type, Enum: append(append([]any{}, s.Value.Enum...), "adopted"),
			})
		}, Major, "adopted"},

		// Not breaking.
		{"new optional response header", func(d *openapi3.T) {
			d.Paths.Value("/pets").Get.Responses.Value("200").Value.Headers["X-Request-Id"] = &openapi3.HeaderRef{
				Value: &openapi3.Header{Parameter: openapi3.Parameter{Schema: openapi3.NewSchemaRef("", openapi3.NewStringSchema())}},
			}
		}, Minor, "X-Request-Id"},
		{"new optional query parameter", func(d *openapi3.T) {
			op := d.Paths.Value("/pets").Get
			op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Value: openapi3.NewQueryParameter("name").WithSchema(openapi3.NewStringSchema())})
		}, Minor, "name"},
		{"new enum value in Error.code, and an answer's code", func(d *openapi3.T) {
			// Each answer states its code in its own schema (ErrorRateLimited
			// for a 429): a new code is one of Error's and one answer's.
			for _, name := range []string{"Error", "ErrorRateLimited"} {
				code := d.Components.Schemas[name].Value.Properties["code"].Value
				code.Enum = append(code.Enum, "quota_exceeded")
			}
		}, Minor, "quota_exceeded"},
		{"longer description", func(d *openapi3.T) {
			op := d.Paths.Value("/pets").Get
			op.Description += "\nA longer description.\n"
		}, Patch, "wording"},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := loadDoc(t, base)
			tt.change(doc)
			baseVersion := doc.Info.Version

			// Unchanged version: refused, naming the change.
			r := compare(t, base, doc)
			if r.Required != tt.want {
				t.Fatalf("required raise: got %s, want %s; changes: %v", r.Required, tt.want, r.Changes)
			}
			if r.OK() {
				t.Fatalf("got ok under the unchanged version %s, want refused", baseVersion)
			}
			text := strings.Join(r.Problems, "\n")
			for _, c := range r.Changes {
				text += "\n" + c.String()
			}
			if r.Wording {
				text += "\nwording"
			}
			t.Log(text)
			if !strings.Contains(text, tt.names) {
				t.Errorf("the gate's output does not name the change (%q):\n%s", tt.names, text)
			}

			// The smallest version that carries it: accepted, with the base
			// path moved at a new major, everywhere the spec names it.
			v, _ := parseVersion(baseVersion)
			doc.Info.Version = v.next(tt.want).String()
			var r2 *Report
			if tt.want == Major {
				if r := compare(t, base, doc); r.OK() || !strings.Contains(strings.Join(r.Problems, "\n"), "/v2") {
					t.Errorf("2.0.0 with the base path /v1: got %v, want a problem naming /v2", r.Problems)
				}
				for _, s := range doc.Servers {
					s.URL = strings.TrimSuffix(s.URL, "/v1") + "/v2"
				}
				if r := compare(t, base, doc); r.OK() || len(r.Leftovers) == 0 {
					t.Errorf("2.0.0 with servers at /v2 and /v1 left in patterns and enums: got ok, want the places named")
				}
				r2 = compareData(t, base, movedTo(t, doc, "/v2"))
			} else {
				r2 = compare(t, base, doc)
			}
			if !r2.OK() {
				t.Errorf("under %s: got %v %v, want ok", doc.Info.Version, r2.Problems, r2.Leftovers)
			}
			// One step short of it: refused (a patch raise cannot carry a
			// minor change, nor a minor raise a major one).
			if tt.want > Patch {
				doc.Info.Version = v.next(tt.want - 1).String()
				for _, s := range doc.Servers {
					s.URL = strings.TrimSuffix(s.URL, "/v2") + "/v1"
				}
				if r := compare(t, base, doc); r.OK() {
					t.Errorf("under %s: got ok, want refused", doc.Info.Version)
				}
			}
		})
	}
}

func TestVersionRule(t *testing.T) {
	base := realSpec(t)
	// The versions below are relative to a release 1.0.0 of today's contract.
	base = regexp.MustCompile(`(?m)^  version: .*$`).ReplaceAll(base, []byte("  version: 1.0.0"))
	tests := []struct {
		name    string
		version string
		servers string // the base path every server url ends with
		ok      bool
		// only: the servers alone name the new base path, not the patterns
		// and enums that name the old one.
		only bool
	}{
		{"no change", "1.0.0", "/v1", true, false},
		{"a raise without a change", "1.1.0", "/v1", true, false},
		{"lower", "0.9.0", "/v1", false, false},
		{"not semver", "1.0", "/v1", false, false},
		{"base path disagrees with the major", "1.0.0", "/v2", false, false},
		{"a new major and its base path", "2.0.0", "/v2", true, false},
		{"a new major, the old base path", "2.0.0", "/v1", false, false},
		{"a new major, its base path in servers only", "2.0.0", "/v2", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := loadDoc(t, base)
			doc.Info.Version = tt.version
			for _, s := range doc.Servers {
				s.URL = strings.TrimSuffix(s.URL, "/v1") + tt.servers
			}
			data := movedTo(t, doc, tt.servers)
			if tt.only {
				data, _ = json.Marshal(doc)
			}
			if r := compareData(t, base, data); r.OK() != tt.ok {
				t.Errorf("ok: got %v, want %v (problems: %v %v)", r.OK(), tt.ok, r.Problems, r.Leftovers)
			}
		})
	}
}

// The changelog: one line a change, breaking ones marked, past releases kept,
// and a release starts an empty Unreleased section.
func TestChangelog(t *testing.T) {
	r := &Report{BaseVersion: "1.0.0", RevVersion: "2.0.0", Required: Major, Changes: []Change{
		{Raise: Major, Where: "GET /pets", Text: "removed the success response with the status '200'"},
		{Raise: Minor, Where: "POST /pets", Text: "added the optional request header 'Idempotency-Key'"},
	}}
	old := "# old head\n\n## Unreleased: 1.0.0 against the released 1.0.0\n\nNo change since the release.\n\n## 1.0.0\n\nThe first released contract.\n"

	got := changelog(old, r, "v0", false)
	for _, want := range []string{
		"## Unreleased: 2.0.0 against the released 1.0.0\n\n- **breaking** `GET /pets`: removed the success response with the status '200'\n- `POST /pets`: added the optional request header 'Idempotency-Key'\n\n## 1.0.0\n\nThe first released contract.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("changelog:\n%s\nwant it to contain:\n%s", got, want)
		}
	}
	if strings.Count(got, "## 1.0.0") != 1 {
		t.Errorf("past release not kept exactly once:\n%s", got)
	}

	released := changelog(got, r, "v0", true)
	if !strings.Contains(released, "## Unreleased: 2.0.0 against the released 2.0.0\n\nNo change since the release.\n\n## 2.0.0\n\n- **breaking**") ||
		!strings.HasSuffix(released, "## 1.0.0\n\nThe first released contract.\n") {
		t.Errorf("after a release:\n%s", released)
	}
}

func loadDoc(t *testing.T, data []byte) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func compare(t *testing.T, base []byte, rev *openapi3.T) *Report {
	t.Helper()
	data, err := json.Marshal(rev)
	if err != nil {
		t.Fatal(err)
	}
	return compareData(t, base, data)
}

func compareData(t *testing.T, base, data []byte) *Report {
	t.Helper()
	r, err := Compare(base, data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ptr[T any](v T) *T { return &v }

// movedTo is rev in JSON with the base path /v1 replaced by to wherever it
// is named.
func movedTo(t *testing.T, rev *openapi3.T, to string) []byte {
	t.Helper()
	data, err := json.Marshal(rev)
	if err != nil {
		t.Fatal(err)
	}
	return replaceBase(data, "/v1", to)
}

// One change to a shared schema is one line, whatever number of operations
// and responses oasdiff reports it in; distinct changes stay distinct.
func TestMerge(t *testing.T) {
	got := merge([]Change{
		{Raise: Minor, Where: "POST /pets", Text: "added the new `x` enum value to the `code` response property for the response status `400`"},
		{Raise: Minor, Where: "GET /pets", Text: "added the new `x` enum value to the `code` response property for the response status `401`"},
		{Raise: Minor, Where: "GET /pets", Text: "added the new `x` enum value to the `code` response property for the response status `400`"},
		{Raise: Major, Where: "GET /pets", Text: "removed the success response with the status `200`"},
	})
	want := []Change{
		{Raise: Major, Where: "GET /pets", Text: "removed the success response with the status `200`"},
		{Raise: Minor, Where: "GET /pets, POST /pets", Text: "added the new `x` enum value to the `code` response property for the response statuses `400`, `401`"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
