package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/apitest"
)

func TestRateLimitConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no unit", nil, map[string]string{"PETSTORE_RATE_LIMIT": "50"}, `PETSTORE_RATE_LIMIT "50": want N/s or N/m`},
		{"hours", nil, map[string]string{"PETSTORE_RATE_LIMIT": "50/h"}, `PETSTORE_RATE_LIMIT "50/h": unit "h"`},
		{"zero", nil, map[string]string{"PETSTORE_RATE_LIMIT": "0/s"}, "count 0: want 1 to 1000000"},
		{"bad burst", nil, map[string]string{"PETSTORE_RATE_LIMIT": "5/s,burst=x"}, `burst "x"`},
		{"flag", []string{"-rate-limit", "fast"}, map[string]string{}, `-rate-limit "fast"`},
		{"flag beats env", []string{"-rate-limit", "9/x"}, map[string]string{"PETSTORE_RATE_LIMIT": "5/s"}, `unit "x"`},
		{"long value clipped", nil, map[string]string{"PETSTORE_RATE_LIMIT": strings.Repeat("9", 500)}, "PETSTORE_RATE_LIMIT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := configure(tc.args, func(k string) string { return tc.env[k] })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("configure: got %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") || len(err.Error()) > 200 {
				t.Errorf("error %q: want one short line", err)
			}
		})
	}
}

func TestServeRateLimited(t *testing.T) {
	c := serveSetting(t, "PETSTORE_RATE_LIMIT", "1/m,burst=2", `"rate_limit":"1/m,burst=2"`)
	for i, want := range []struct {
		status    int
		remaining string
	}{{200, "1"}, {200, "0"}, {429, "0"}} {
		res := c.Do(t, "GET", apitest.Path("/pets"), "")
		if res.Status != want.status || res.Header.Get("RateLimit-Remaining") != want.remaining || res.Header.Get("RateLimit-Limit") != "2" {
			t.Fatalf("request %d: got %d, RateLimit-Limit %q, Remaining %q; want %d, 2, %s", i+1, res.Status, res.Header.Get("RateLimit-Limit"), res.Header.Get("RateLimit-Remaining"), want.status, want.remaining)
		}
		if want.status == http.StatusTooManyRequests {
			// A minute a token, less the moments the test took: 59 or 60.
			if ra := res.Header.Get("Retry-After"); ra != "60" && ra != "59" {
				t.Fatalf("Retry-After: got %q, want 60 or 59", ra)
			}
		}
	}
}

// TestRateLimitPerReplica pins the scope the contract states: each server
// counts a key's requests itself. A key that has used up its burst on one
// replica is answered by another with that one's full bucket, in the
// headers too.
func TestRateLimitPerReplica(t *testing.T) {
	a := serveSetting(t, "PETSTORE_RATE_LIMIT", "1/m,burst=2", `"rate_limit":"1/m,burst=2"`)
	b := serveSetting(t, "PETSTORE_RATE_LIMIT", "1/m,burst=2", `"rate_limit":"1/m,burst=2"`)
	for range 2 {
		a.Do(t, "GET", apitest.Path("/pets"), "")
	}
	if res := a.Do(t, "GET", apitest.Path("/pets"), ""); res.Status != http.StatusTooManyRequests {
		t.Fatalf("replica A after the burst: got %d, want 429", res.Status)
	}
	res := b.Do(t, "GET", apitest.Path("/pets"), "")
	if res.Status != http.StatusOK || res.Header.Get("RateLimit-Remaining") != "1" {
		t.Fatalf("replica B: got %d, RateLimit-Remaining %q; want 200 and 1 (its own bucket)", res.Status, res.Header.Get("RateLimit-Remaining"))
	}
}
