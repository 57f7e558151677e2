package conform_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/conform"
)

// The contract's response objects are open: a later minor version may add
// members, and a client must ignore those it does not know. So the kit
// judges a rival by the contract as written and passes a server that
// sends a member more in every object it answers, a pet, a page's pets and
// an Error alike (docs/conformance-kit.md, extra members). The reference's
// own tests hold it to the documented members (apitest, contract.Strict).
func TestExtraMemberPasses(t *testing.T) {
	t.Parallel()
	extra := rewriteResponse(func(r *http.Request, status int, h http.Header, body []byte) []byte {
		if r.Method == http.MethodHead || !strings.HasPrefix(h.Get("Content-Type"), "application/json") || len(body) == 0 {
			return body
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if dec.Decode(&v) != nil {
			return body
		}
		add := func(v any) {
			if m, ok := v.(map[string]any); ok {
				m["servedBy"] = "a rival"
			}
		}
		add(v)
		if items, ok := v.([]any); ok {
			for _, item := range items {
				add(item)
			}
		}
		out, err := json.Marshal(v)
		if err != nil {
			return body
		}
		return append(out, '\n')
	})
	rep, err := conform.Run(context.Background(), kitConfig(serveMutant(t, extra)))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	if !rep.OK() {
		t.Fatalf("a server that sends a member more fails the kit:\n%s", b.String())
	}
	if !containsRow(b.String(), "response_schema_conformance", "PASS") {
		t.Errorf("response_schema_conformance: not PASS\n%s", b.String())
	}
}
