package contract_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/contract"
	"github.com/petstore/petstore/internal/schemagen/schematest"
)

// Integers in responses are held to their exact int64 range and spelling,
// which kin-openapi's float64 comparison alone does not see.
func TestExactIntegers(t *testing.T) {
	c := embedded(t)
	header := http.Header{
		"Content-Type": {"application/json"},
		"Deprecation":  {"@1767225600"},
		"Sunset":       {"Thu, 05 Dec 2030 00:00:00 GMT"},
		"Link":         {`<` + apitest.Base() + `/pets>; rel="successor-version"`},
	}
	pet := func(id, categoryID string) string {
		return apitest.PetJSON(`{"id":` + id + `,"name":"Rex","categoryId":` + categoryID + `,"status":"available"}`)
	}
	for _, tc := range []struct {
		path, body string
		bad        bool
	}{
		{apitest.Path("/pets/1"), pet("1", "9223372036854775807"), false},
		{apitest.Path("/pets/1"), pet("9223372036854775807", "1"), false},
		{apitest.Path("/pets/1"), pet("9223372036854775808", "1"), true},
		{apitest.Path("/pets/1"), pet("1", "9223372036854776000"), true},
		{apitest.Path("/pets/1"), pet("1.0", "1"), true},
		{apitest.Path("/pets/1"), pet("1", "1e0"), true},
		{apitest.Path("/pets"), "[" + pet("1", "1") + "," + pet("2", "9223372036854775808") + "]", true},
		{apitest.Path("/pets"), "[" + pet("1", "1") + "," + pet("9223372036854775807", "9223372036854775807") + "]", false},
	} {
		var bad []string
		for _, v := range c.Check(httptest.NewRequest("GET", tc.path, nil), http.StatusOK, header, []byte(tc.body)) {
			if v.Kind == contract.ResponseSchema {
				bad = append(bad, v.Message)
			}
		}
		switch {
		case tc.bad && !strings.Contains(strings.Join(bad, "\n"), "is not an integer of 64 bits"):
			t.Errorf("%s %s: got %q, want a violation of the int64 range or spelling", tc.path, tc.body, bad)
		case !tc.bad && len(bad) > 0:
			t.Errorf("%s %s: got %q, want none", tc.path, tc.body, bad)
		}
	}
}

// Every value of a declared header is judged, not only the first, and a
// header the contract declares with one value comes once.
func TestEveryHeaderValue(t *testing.T) {
	c := embedded(t)
	body := []byte(`{"code":"unauthorized","message":"missing API key","status":401}`)
	for _, tc := range []struct {
		challenges []string
		want       string // in a response_headers_conformance violation; "" none
	}{
		{[]string{`Bearer realm="petstore"`}, ""},
		{[]string{`Bearer realm="petstore"`, `Basic realm="petstore"`}, "value 2"},
		{[]string{`Bearer realm="petstore"`, `Bearer realm="petstore"`}, "given 2 times"},
	} {
		header := http.Header{"Content-Type": {"application/json"}, "Www-Authenticate": tc.challenges}
		var got []string
		for _, v := range c.Check(httptest.NewRequest("GET", apitest.Path("/pets"), nil), http.StatusUnauthorized, header, body) {
			if v.Kind == contract.ResponseHeaders {
				got = append(got, v.Message)
			}
		}
		switch all := strings.Join(got, "\n"); {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%q: got %q, want none", tc.challenges, got)
		case tc.want != "" && !strings.Contains(all, tc.want):
			t.Errorf("%q: got %q, want a violation saying %q", tc.challenges, got, tc.want)
		}
	}
}

// A second value of one header is judged against that header alone: a
// second valid Location beside a bad Idempotent-Replayed is blamed on
// Location's count, and the bad header once, under its own name.
func TestHeaderValueBlame(t *testing.T) {
	c := embedded(t)
	header := http.Header{
		"Content-Type":        {"application/json"},
		"Location":            {apitest.Path("/pets/1"), apitest.Path("/pets/1")},
		"Idempotent-Replayed": {"yes"},
	}
	body := []byte(`{"id":1,"name":"Rex","status":"available"}`)
	var got []string
	for _, v := range c.Check(httptest.NewRequest("POST", apitest.Path("/pets"), nil), http.StatusCreated, header, body) {
		if v.Kind == contract.ResponseHeaders {
			got = append(got, v.Message)
		}
	}
	all := strings.Join(got, "\n")
	if strings.Contains(all, "Location, value 2") || strings.Count(all, "Idempotent-Replayed") != 1 || !strings.Contains(all, "Location given 2 times") {
		t.Errorf("got %q, want Location given 2 times, and Idempotent-Replayed once, not blamed on Location's value 2", got)
	}
}

// embedded is the embedded spec's contract under its base path.
func embedded(t *testing.T) *contract.Contract {
	t.Helper()
	spec, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.New(spec, apitest.Base())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestFromServers: the embedded spec is routed under its servers' base
// path, servers that agree on it in their own words give it, and a spec
// whose servers disagree on it is refused.
func TestFromServers(t *testing.T) {
	spec, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.FromServers(spec)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(spec.Servers[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.BasePath(); got != u.Path || got == "" {
		t.Errorf("base path: got %q, want %q, the path of %s", got, u.Path, u)
	}
	agree := *spec
	agree.Servers = openapi3.Servers{{URL: "https://a.example/api/v7/"}, {URL: "http://b.example:8080/api/v7"}}
	if c, err := contract.FromServers(&agree); err != nil {
		t.Errorf("servers that agree on /api/v7: %v", err)
	} else if got := c.BasePath(); got != "/api/v7" {
		t.Errorf("servers that agree on /api/v7: got %q", got)
	}
	bad := *spec
	bad.Servers = openapi3.Servers{{URL: "https://a.example/api/v7"}, {URL: "https://b.example/api/v8"}}
	if _, err := contract.FromServers(&bad); err == nil {
		t.Error("servers that disagree on the base path: no error")
	}
}

// The response objects are open: a member the contract does not name is
// no violation, but for a Strict contract (the reference's own tests),
// where it is one, wherever it is: in a pet, a pet of a page, an Error.
func TestStrictMembers(t *testing.T) {
	c := embedded(t)
	plain := http.Header{"Content-Type": {"application/json"}}
	created := plain.Clone()
	created.Set("Location", apitest.Path("/pets/1"))
	// A pet, without its closing brace: the members Pet requires.
	pet := strings.TrimSuffix(apitest.PetJSON(`{"id":1,"name":"Rex","categoryId":1,"status":"available"}`), "}")
	for _, tc := range []struct {
		method, path string
		status       int
		header       http.Header
		body, extra  string // extra: the member a strict check names; "" for none
	}{
		{"POST", apitest.Path("/pets"), 201, created, pet + `}`, ""},
		// Members the spec cannot name (schematest.Name).
		{"POST", apitest.Path("/pets"), 201, created, pet + schematest.JSON(`,"notDocumented":["a"]}`, "notDocumented"), "/" + schematest.Name("notDocumented")},
		{"GET", apitest.Path("/pets"), 200, plain, `[` + pet + `},` + pet + schematest.JSON(`,"age":{"years":2}}]`, "age"), "/1/" + schematest.Name("age")},
		{"GET", apitest.Path("/pets"), 400, plain, schematest.JSON(`{"code":"invalid_request","message":"limit","status":400,"field":"limit"}`, "field"), "/" + schematest.Name("field")},
		{"GET", "/nowhere", 404, plain, schematest.JSON(`{"code":"not_found","message":"no","status":404,"hint":"x"}`, "hint"), "/" + schematest.Name("hint")},
	} {
		req := httptest.NewRequest(tc.method, tc.path, nil)
		if vs := c.Check(req, tc.status, tc.header, []byte(tc.body)); len(vs) > 0 {
			t.Errorf("%s %s -> %d %s: got %v, want none (open)", tc.method, tc.path, tc.status, tc.body, vs)
		}
		vs := c.Strict().Check(req, tc.status, tc.header, []byte(tc.body))
		switch {
		case tc.extra == "" && len(vs) > 0:
			t.Errorf("strict, %s: got %v, want none", tc.body, vs)
		case tc.extra != "" && (len(vs) != 1 || !strings.Contains(vs[0].Message, tc.extra+": a member the contract does not document")):
			t.Errorf("strict, %s: got %v, want one violation naming %s", tc.body, vs, tc.extra)
		}
	}
}
