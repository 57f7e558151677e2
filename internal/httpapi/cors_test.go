package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/memstore"
)

// corsCase is a request with or without the CORS headers, and what its
// answer must carry. preflight names the methods a preflight's answer
// allows; "" for an answer that is no preflight's.
type corsCase struct {
	name          string
	client        bool // with the key
	method, path  string
	header        []string
	status        int
	wantAllowOrig string
	preflight     string
}

// preflights are a preflight for each operation of the spec, answered with
// the methods of its path's operations.
func preflights(origin string) []corsCase {
	var out []corsCase
	for _, op := range apitest.Operations() {
		out = append(out, corsCase{"preflight " + op.ID, false, "OPTIONS", op.Target("1"),
			[]string{"Origin", origin, "Access-Control-Request-Method", op.Method, "Access-Control-Request-Headers", "authorization"},
			204, "*", strings.Join(apitest.Methods(op.Path), ", ")})
	}
	return out
}

func TestCORS(t *testing.T) {
	c := newClient(t, memstore.New())
	anon := *c
	anon.Key = ""
	const origin = "https://app.example"
	for _, tc := range append([]corsCase{
		{"simple request", true, "GET", apitest.Path("/pets"), []string{"Origin", origin}, 200, "*", ""},
		{"no Origin", true, "GET", apitest.Path("/pets"), nil, 200, "", ""},
		{"401 readable by the page", false, "GET", apitest.Path("/pets"), []string{"Origin", origin}, 401, "*", ""},
		{"OPTIONS without Origin", false, "OPTIONS", apitest.Path("/pets"), []string{"Access-Control-Request-Method", "GET"}, 405, "", ""},
		{"OPTIONS without request method", false, "OPTIONS", apitest.Path("/pets"), []string{"Origin", origin}, 405, "*", ""},
		{"preflight on an unknown path", false, "OPTIONS", apitest.Path("/orders"), []string{"Origin", origin, "Access-Control-Request-Method", "GET"}, 404, "*", ""},
	}, preflights(origin)...) {
		t.Run(tc.name, func(t *testing.T) {
			cl := &anon
			if tc.client {
				cl = c
			}
			res := cl.Do(t, tc.method, tc.path, "", tc.header...)
			if res.Status != tc.status {
				t.Fatalf("got status %d %s, want %d", res.Status, res.Body, tc.status)
			}
			if got := res.Header.Get("Access-Control-Allow-Origin"); got != tc.wantAllowOrig {
				t.Errorf("Access-Control-Allow-Origin: got %q, want %q", got, tc.wantAllowOrig)
			}
			if res.Header.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("Access-Control-Allow-Credentials is set: keys are not cookies")
			}
			methods, headers := res.Header.Get("Access-Control-Allow-Methods"), res.Header.Get("Access-Control-Allow-Headers")
			if tc.preflight != "" {
				if methods != tc.preflight || !strings.Contains(headers, "Authorization") || !strings.Contains(headers, "Content-Type") || !strings.Contains(headers, "Idempotency-Key") {
					t.Errorf("preflight: Allow-Methods %q, Allow-Headers %q: want %s and Authorization, Content-Type, Idempotency-Key", methods, headers, tc.preflight)
				}
				if allow := res.Header.Get("Allow"); allow != tc.preflight {
					t.Errorf("preflight: Allow %q, want %q", allow, tc.preflight)
				}
			} else if methods != "" {
				t.Errorf("Access-Control-Allow-Methods %q on a non-preflight answer", methods)
			}
			if expose := res.Header.Get("Access-Control-Expose-Headers"); tc.wantAllowOrig != "" && tc.method != http.MethodOptions &&
				(!strings.Contains(expose, "Link") || !strings.Contains(expose, "Idempotent-Replayed")) {
				t.Errorf("Access-Control-Expose-Headers %q: want the declared headers, Link and Idempotent-Replayed among them", expose)
			}
		})
	}
}
