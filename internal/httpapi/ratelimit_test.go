package httpapi_test

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/ratelimit"
)

const otherKey = "other-key-0123456789abcdef0123456789"

// clock is a time source a test moves by hand: Unix nanoseconds.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Unix(1_800_000_000, 0).UnixNano())
	return c
}

func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// newLimitedClient builds the full app with rate limiting at limit, on clk,
// accepting testKey and otherKey; the client sends testKey.
func newLimitedClient(t *testing.T, limit string, clk *clock) *apitest.Client {
	t.Helper()
	l, err := ratelimit.Parse(limit)
	if err != nil {
		t.Fatal(err)
	}
	app, err := httpapi.New(httpapi.Config{
		Store:     memstore.New(),
		Keys:      apikey.NewSet(apikey.Hash(testKey), apikey.Hash(otherKey)),
		RateLimit: ratelimit.New(l, clk.Now),
	})
	if err != nil {
		t.Fatalf("httpapi.New: %v", err)
	}
	return &apitest.Client{Contract: apitest.Load(t), Handler: app, Key: testKey}
}

// quota reads the RateLimit-* headers; ok is false when any is missing.
func quota(t *testing.T, res apitest.Response) (limit, remaining, reset int, ok bool) {
	t.Helper()
	var n [3]int
	for i, name := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
		v := res.Header.Get(name)
		if v == "" {
			return 0, 0, 0, false
		}
		var err error
		if n[i], err = strconv.Atoi(v); err != nil {
			t.Fatalf("%s: %q is not an integer", name, v)
		}
	}
	return n[0], n[1], n[2], true
}

func TestRateLimit(t *testing.T) {
	clk := newClock()
	c := newLimitedClient(t, "6/m,burst=4", clk) // a request every 10 s, 4 at once
	other := *c
	other.Key = otherKey
	anon := *c
	anon.Key = ""

	// Every authenticated answer, 2xx or 4xx, reports the quota, and each
	// request, refused or not, takes from it.
	steps := []struct {
		method, path, body string
		status             int
	}{
		{"POST", apitest.Path("/pets"), apitest.Body(`{"name":"Rex","categoryId":1}`), 201},
		{"GET", apitest.Path("/pets?limit=0"), "", 400},
		{"GET", apitest.Path("/pets/999"), "", 404},
		{"GET", apitest.Path("/pets/1"), "", 200},
	}
	for i, s := range steps {
		res := c.Do(t, s.method, s.path, s.body)
		if res.Status != s.status {
			t.Fatalf("%s %s: got %d %s, want %d", s.method, s.path, res.Status, res.Body, s.status)
		}
		limit, remaining, reset, ok := quota(t, res)
		if !ok || limit != 4 || remaining != 3-i || reset != 10*(i+1) {
			t.Fatalf("%s %s: got RateLimit %d/%d/%d (present %v), want 4/%d/%d", s.method, s.path, limit, remaining, reset, ok, 3-i, 10*(i+1))
		}
	}

	// Over the limit: 429 on every operation, with Retry-After.
	for _, r := range [][3]string{{"GET", apitest.Path("/pets"), ""}, {"POST", apitest.Path("/pets"), apitest.Body(`{"name":"Max","categoryId":1}`)}, {"GET", apitest.Path("/pets/1"), ""}} {
		res := c.Do(t, r[0], r[1], r[2])
		wantError(t, res, http.StatusTooManyRequests, gen.ErrorCodeRateLimited, "rate limit of 6/m,burst=4 exceeded")
		if got := res.Header.Get("Retry-After"); got != "10" {
			t.Errorf("%s %s: Retry-After: got %q, want 10", r[0], r[1], got)
		}
		if _, remaining, reset, ok := quota(t, res); !ok || remaining != 0 || reset != 40 {
			t.Errorf("%s %s: got RateLimit-Remaining %d, Reset %d (present %v); want 0, 40", r[0], r[1], remaining, reset, ok)
		}
	}
	// The refused create wrote nothing.
	var list []gen.Pet
	other.Do(t, "GET", apitest.Path("/pets"), "").JSON(t, &list)
	if len(list) != 1 {
		t.Fatalf("after a 429 create: %d pets listed, want 1", len(list))
	}

	// A second key has its own quota (the list above took one).
	res := other.Do(t, "GET", apitest.Path("/pets"), "")
	if _, remaining, _, _ := quota(t, res); res.Status != 200 || remaining != 2 {
		t.Fatalf("second key: got %d, RateLimit-Remaining %d; want 200, 2", res.Status, remaining)
	}

	// No key: 401, without quota headers, and it takes nothing.
	res = anon.Do(t, "GET", apitest.Path("/pets"), "")
	if _, _, _, ok := quota(t, res); res.Status != 401 || ok {
		t.Fatalf("no key: got %d with quota headers %v; want 401 without", res.Status, ok)
	}

	// Time restores the quota: part of the wait is not enough.
	clk.Advance(9 * time.Second)
	res = c.Do(t, "GET", apitest.Path("/pets"), "")
	if res.Status != 429 || res.Header.Get("Retry-After") != "1" {
		t.Fatalf("after 9 s: got %d Retry-After %q, want 429 and 1", res.Status, res.Header.Get("Retry-After"))
	}
	clk.Advance(time.Second)
	res = c.Do(t, "GET", apitest.Path("/pets"), "")
	if _, remaining, reset, _ := quota(t, res); res.Status != 200 || remaining != 0 || reset != 40 {
		t.Fatalf("after 10 s: got %d, Remaining %d, Reset %d; want 200, 0, 40", res.Status, remaining, reset)
	}
	clk.Advance(40 * time.Second)
	res = c.Do(t, "GET", apitest.Path("/pets"), "")
	if _, remaining, reset, _ := quota(t, res); res.Status != 200 || remaining != 3 || reset != 10 {
		t.Fatalf("after a full refill: got %d, Remaining %d, Reset %d; want 200, 3, 10", res.Status, remaining, reset)
	}
}

func TestRateLimitBodyTooLarge(t *testing.T) {
	clk := newClock()
	c := newLimitedClient(t, "1/s,burst=2", clk)
	res := c.DoBytes(t, "POST", apitest.Path("/pets"), make([]byte, 2<<20))
	if _, remaining, _, ok := quota(t, res); res.Status != 413 || !ok || remaining != 1 {
		t.Fatalf("2 MiB body: got %d, Remaining %d (present %v); want 413 with Remaining 1", res.Status, remaining, ok)
	}
}

func TestRateLimitOffByDefault(t *testing.T) {
	c := newClient(t, memstore.New())
	for i := range 300 {
		res := c.Do(t, "GET", apitest.Path("/pets"), "")
		if res.Status != 200 {
			t.Fatalf("request %d without a configured limit: got %d, want 200", i+1, res.Status)
		}
		if _, _, _, ok := quota(t, res); ok || res.Header.Get("RateLimit-Limit") != "" {
			t.Fatalf("request %d: RateLimit headers without a configured limit", i+1)
		}
	}
	if res := c.Do(t, "GET", apitest.Path("/pets?limit=0"), ""); res.Header.Get("RateLimit-Remaining") != "" {
		t.Fatalf("400 without a configured limit carries RateLimit-Remaining")
	}
}
