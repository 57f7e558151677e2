package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/memstore"
)

func TestCORS(t *testing.T) {
	c := newClient(t, memstore.New())
	anon := *c
	anon.Key = ""
	const origin = "https://app.example"
	for _, tc := range []struct {
		name           string
		client         bool // with the key
		method, path   string
		header         []string
		status         int
		wantAllowOrig  string
		wantPreflightH bool
	}{
		{"simple request", true, "GET", apitest.Path("/pets"), []string{"Origin", origin}, 200, "*", false},
		{"no Origin", true, "GET", apitest.Path("/pets"), nil, 200, "", false},
		{"401 readable by the page", false, "GET", apitest.Path("/pets"), []string{"Origin", origin}, 401, "*", false},
		{"preflight list", false, "OPTIONS", apitest.Path("/pets"), []string{"Origin", origin, "Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "authorization"}, 204, "*", true},
		{"preflight create", false, "OPTIONS", apitest.Path("/pets"), []string{"Origin", origin, "Access-Control-Request-Method", "POST"}, 204, "*", true},
		{"preflight get", false, "OPTIONS", apitest.Path("/pets/1"), []string{"Origin", origin, "Access-Control-Request-Method", "GET"}, 204, "*", true},
		{"OPTIONS without Origin", false, "OPTIONS", apitest.Path("/pets"), []string{"Access-Control-Request-Method", "GET"}, 405, "", false},
		{"OPTIONS without request method", false, "OPTIONS", apitest.Path("/pets"), []string{"Origin", origin}, 405, "*", false},
		{"preflight on an unknown path", false, "OPTIONS", apitest.Path("/orders"), []string{"Origin", origin, "Access-Control-Request-Method", "GET"}, 404, "*", false},
	} {
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
			if tc.wantPreflightH {
				if methods != "GET,POST" || !strings.Contains(headers, "Authorization") || !strings.Contains(headers, "Content-Type") || !strings.Contains(headers, "Idempotency-Key") {
					t.Errorf("preflight: Allow-Methods %q, Allow-Headers %q: want GET,POST and Authorization, Content-Type, Idempotency-Key", methods, headers)
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
