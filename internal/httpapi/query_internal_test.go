package httpapi

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/petstore/petstore/gen"
)

// listRules are strictParams's rules of listPets.
func listRules(t testing.TB) paramRules {
	t.Helper()
	spec, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	item := spec.Paths.Value("/pets")
	return paramRulesOf(item, item.Get)
}

// parsedVerdicts is what checkQuery may answer for raw, as url.ParseQuery
// reads it: nil for a query the rules accept, otherwise the message of each
// parameter at fault (which of them checkQuery names is its choice).
func parsedVerdicts(rules paramRules, raw string) []string {
	values, err := url.ParseQuery(raw)
	if err != nil {
		return []string{invalid("query: %v", err).Message}
	}
	var faults []string
	for name, vs := range values {
		rule, ok := rules.query[name]
		switch {
		case !ok:
			faults = append(faults, invalid("%.64q: unknown query parameter", name).Message)
		case len(vs) > 1:
			faults = append(faults, invalid("%s: must be given once", name).Message)
		case rule != nil:
			if err := rule.check(name, vs[0]); err != nil {
				faults = append(faults, err.Error())
			}
		}
	}
	return faults
}

// FuzzCheckQuery: checkQuery gives one of the verdicts ParseQuery's reading
// gives, for any query.
func FuzzCheckQuery(f *testing.F) {
	for _, q := range []string{
		"limit=20", "limit=20&after=1000", "status=pending&limit=20&after=1000",
		"limit=20&limit=21", "limit=abc", "limit=+1", "limit=007", "limit=-0", "limit=",
		"limit", "=1", "&&limit=5&&", "lim%69t=5", "limit=%zz", "limit=1;after=2", "a+b=1",
		"status=sold&status=sold", "nope=1&limit=5", "limit=5&nope=1", "after=9223372036854775808",
		"a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9", strings.Repeat("limit=1&", 20), "limit=5&limit=x",
		strings.Repeat("limit=1&", 10001), // beyond ParseQuery's limit on pairs
	} {
		f.Add(q)
	}
	rules := listRules(f)
	f.Fuzz(func(t *testing.T, raw string) {
		want := parsedVerdicts(rules, raw)
		err := rules.checkQuery(raw)
		switch {
		case len(want) == 0 && err != nil:
			t.Fatalf("checkQuery(%q) = %v; ParseQuery's reading accepts it", raw, err)
		case len(want) > 0 && err == nil:
			t.Fatalf("checkQuery(%q) accepts it; ParseQuery's reading refuses it: %q", raw, want)
		case err != nil && !slices.Contains(want, err.Error()):
			t.Fatalf("checkQuery(%q) = %q; want one of %q", raw, err, want)
		}
	})
}
