package contract_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/contract"
)

// Integers in responses are held to their exact int64 range and spelling,
// which kin-openapi's float64 comparison alone does not see.
func TestExactIntegers(t *testing.T) {
	spec, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.New(spec, "/v1")
	if err != nil {
		t.Fatal(err)
	}
	header := http.Header{
		"Content-Type": {"application/json"},
		"Deprecation":  {"@1767225600"},
		"Sunset":       {"Thu, 05 Dec 2030 00:00:00 GMT"},
		"Link":         {`</v1/pets>; rel="successor-version"`},
	}
	pet := func(id, categoryID string) string {
		return `{"id":` + id + `,"name":"Rex","categoryId":` + categoryID + `,"status":"available"}`
	}
	for _, tc := range []struct {
		path, body string
		bad        bool
	}{
		{"/v1/pets/1", pet("1", "9223372036854775807"), false},
		{"/v1/pets/1", pet("9223372036854775807", "1"), false},
		{"/v1/pets/1", pet("9223372036854775808", "1"), true},
		{"/v1/pets/1", pet("1", "9223372036854776000"), true},
		{"/v1/pets/1", pet("1.0", "1"), true},
		{"/v1/pets/1", pet("1", "1e0"), true},
		{"/v1/pets", "[" + pet("1", "1") + "," + pet("2", "9223372036854775808") + "]", true},
		{"/v1/pets", "[" + pet("1", "1") + "," + pet("9223372036854775807", "9223372036854775807") + "]", false},
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
