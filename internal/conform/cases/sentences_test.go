package cases_test

import (
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/conform/judge"
)

// Every sentence and answer rule of the kit's tables is stated in
// openapi.yaml where the table says (its name in the x-rules there), and
// its quote is words of the description there.
func TestSentencesQuoteTheSpec(t *testing.T) {
	spec := embedded(t)
	rules := cases.ReadRules(spec, cases.Operations(spec))
	type row struct{ name, where, quote string }
	var rows []row
	for _, s := range cases.Sentences {
		rows = append(rows, row{s.Name, s.Where, s.Quote})
	}
	for _, s := range judge.Rules {
		rows = append(rows, row{s.Name, s.Where, s.Quote})
	}
	for _, r := range rows {
		if !rules.Stated(r.name) {
			t.Errorf("%s: not among the x-rules of %s", r.name, r.where)
		}
		if d := descriptionAt(spec, r.where); !strings.Contains(spaced(d), spaced(r.quote)) {
			t.Errorf("%s: the description of %s does not say %q", r.name, r.where, r.quote)
		}
	}
}

// The x-rules reader gives the figures a rule states, none for a rule
// stated elsewhere or not at all, and takes a rule out when the spec does.
func TestRulesFigures(t *testing.T) {
	spec := embedded(t)
	rules := cases.ReadRules(spec, cases.Operations(spec))
	if got := rules.Number("body-size", "maxBytes"); got != 1<<20 {
		t.Errorf("body-size maxBytes: %v, want %d", got, 1<<20)
	}
	if got := rules.Number("retention", "hours"); got != 24 {
		t.Errorf("retention hours: %v, want 24", got)
	}
	if got := rules.Strings("answer-charset", "charsets"); len(got) != 1 || got[0] != "utf-8" {
		t.Errorf("answer-charset charsets: %q, want [utf-8]", got)
	}
	if got := rules.Number("body-size", "hours"); got != 0 {
		t.Errorf("body-size hours: %v, want 0 (not given)", got)
	}
	if rules.Stated("no-such-rule") || rules.Number("no-such-rule", "maxBytes") != 0 || rules.Strings("no-such-rule", "x") != nil {
		t.Error("a rule the kit does not know is stated")
	}
	info := spec.Info.Extensions["x-rules"].(map[string]any)
	delete(info, "body-size")
	info["retention"] = map[string]any{"hours": 1.0} // stated at the wrong place: createPet's rule
	if rules.Stated("body-size") || rules.Number("body-size", "maxBytes") != 0 {
		t.Error("body-size taken out of info's x-rules: still stated")
	}
	if got := rules.Number("retention", "hours"); got != 24 {
		t.Errorf("retention hours: %v, want 24, createPet's, not info's", got)
	}
}

// embedded is a fresh copy of the embedded openapi.yaml: a test may change it.
func embedded(t *testing.T) *openapi3.T {
	t.Helper()
	spec, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// descriptionAt is the description of the place a table names.
func descriptionAt(spec *openapi3.T, where string) string {
	kind, name, _ := strings.Cut(where, " ")
	c := spec.Components
	switch kind {
	case "info.description":
		return spec.Info.Description
	case "operation":
		for _, op := range cases.Operations(spec) {
			if op.ID == name {
				return op.Op.Description
			}
		}
	case "parameter":
		for _, op := range cases.Operations(spec) {
			for _, p := range op.Op.Parameters {
				if p.Value != nil && p.Value.Name == name {
					return p.Value.Description
				}
			}
		}
	case "schema":
		if s := c.Schemas[name]; s != nil {
			return s.Value.Description
		}
	case "header":
		if h := c.Headers[name]; h != nil {
			return h.Value.Description
		}
	case "response":
		if r := c.Responses[name]; r != nil && r.Value.Description != nil {
			return *r.Value.Description
		}
	}
	return ""
}

// spaced is s with each run of white space one space, as YAML folds it,
// and without Markdown's code spans and emphasis.
func spaced(s string) string {
	return strings.Join(strings.Fields(strings.NewReplacer("`", "", "**", "").Replace(s)), " ")
}
