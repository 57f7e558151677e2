package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
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

// throttledApp serves with at most burst wrong keys per address at once,
// refilled at 1/s, on a clock the test moves.
type throttledApp struct {
	t        *testing.T
	app      http.Handler
	clock    *clock
	contract *apitest.Contract
}

func newThrottledApp(t *testing.T, burst int, proxies ...netip.Prefix) *throttledApp {
	t.Helper()
	return throttledAppOf(t, burst, apikey.NewSet(apikey.Hash(testKey)), proxies...)
}

// throttledAppOf is newThrottledApp with the keys of keys.
func throttledAppOf(t *testing.T, burst int, keys apikey.Source, proxies ...netip.Prefix) *throttledApp {
	t.Helper()
	l, err := ratelimit.Parse("1/s,burst=" + strconv.Itoa(burst))
	if err != nil {
		t.Fatal(err)
	}
	clk := newClock()
	app, err := httpapi.New(httpapi.Config{
		Store: memstore.New(), Keys: keys,
		AuthFailures: &l, TrustedProxies: proxies, Now: clk.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &throttledApp{t: t, app: app, clock: clk, contract: apitest.Load(t)}
}

// get sends GET /pets from addr (a peer address, host:port) with the
// Authorization header auth ("" for none) and header pairs, and checks the
// answer against the contract.
func (a *throttledApp) get(addr, auth string, header ...string) *httptest.ResponseRecorder {
	a.t.Helper()
	req := httptest.NewRequest(http.MethodGet, apitest.Path("/pets"), nil)
	req.RemoteAddr = addr
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	a.app.ServeHTTP(rec, req)
	a.contract.Check(a.t, httptest.NewRequest(http.MethodGet, apitest.Path("/pets"), nil), rec.Code, rec.Header(), rec.Body.Bytes())
	return rec
}

// want fails unless rec has status want, and, for a 429, the throttle's
// Error and a Retry-After of retryAfter.
func want(t *testing.T, what string, rec *httptest.ResponseRecorder, status int, retryAfter string) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("%s: got %d %s, want %d", what, rec.Code, rec.Body, status)
	}
	if status != http.StatusTooManyRequests {
		return
	}
	if got := rec.Header().Get("Retry-After"); got != retryAfter {
		t.Errorf("%s: Retry-After %q, want %q", what, got, retryAfter)
	}
	if !strings.Contains(rec.Body.String(), `"code":"`+string(gen.ErrorCodeRateLimited)+`"`) || !strings.Contains(rec.Body.String(), "wrong API key") {
		t.Errorf("%s: body %s, want the throttle's rate_limited Error", what, rec.Body)
	}
}

const (
	wrong   = "Bearer wrong-key-0123456789abcdef0123456789"
	guesser = "192.0.2.1:40000"
	other   = "198.51.100.2:40000"
)

// TestThrottleWrongKeys: an address's wrong keys are limited, then every
// request from it is refused, its key unchecked, until its budget refills;
// other addresses, and valid keys from them, are untouched.
func TestThrottleWrongKeys(t *testing.T) {
	a := newThrottledApp(t, 3)
	valid := "Bearer " + testKey
	for i := range 3 {
		want(t, "wrong key "+strconv.Itoa(i+1), a.get(guesser, wrong), 401, "")
	}
	want(t, "a 4th wrong key", a.get(guesser, wrong), 429, "1")
	want(t, "the valid key from the guesser's address", a.get(guesser, valid), 429, "1")
	want(t, "the valid key from another address", a.get(other, valid), 200, "")
	want(t, "a wrong key from another address", a.get(other, wrong), 401, "")
	a.clock.Advance(time.Second) // one token back
	want(t, "a wrong key a second later", a.get(guesser, wrong), 401, "")
	want(t, "and another", a.get(guesser, wrong), 429, "1")
	a.clock.Advance(time.Second)
	want(t, "the valid key a second later", a.get(guesser, valid), 200, "")
	want(t, "and again: a valid key takes nothing", a.get(guesser, valid), 200, "")
}

// TestThrottleCountsGuessesOnly: valid keys, no key and an empty one take
// nothing from an address's budget; only a key that does not match does.
func TestThrottleCountsGuessesOnly(t *testing.T) {
	a := newThrottledApp(t, 2)
	for range 20 {
		want(t, "valid key", a.get(guesser, "Bearer "+testKey), 200, "")
		want(t, "no key", a.get(guesser, ""), 401, "")
		want(t, "empty bearer", a.get(guesser, "Bearer "), 401, "")
		want(t, "another scheme", a.get(guesser, "Basic dXNlcjpwYXNz"), 401, "")
	}
	want(t, "1st wrong key", a.get(guesser, wrong), 401, "")
	want(t, "2nd wrong key", a.get(guesser, wrong), 401, "")
	want(t, "3rd wrong key", a.get(guesser, wrong), 429, "1")
}

// TestThrottleAddresses: an IPv6 client is its /64; behind a trusted proxy,
// the client is the nearest address X-Forwarded-For names that is not the
// proxy's; a header from anyone else is not believed.
func TestThrottleAddresses(t *testing.T) {
	a := newThrottledApp(t, 1, netip.MustParsePrefix("10.0.0.0/8"))
	want(t, "[2001:db8::1]", a.get("[2001:db8::1]:1", wrong), 401, "")
	want(t, "[2001:db8::2], the same /64", a.get("[2001:db8::2]:1", wrong), 429, "1")
	want(t, "[2001:db8:0:1::1], another /64", a.get("[2001:db8:0:1::1]:1", wrong), 401, "")

	proxy := "10.1.2.3:5000"
	want(t, "via the proxy, client A", a.get(proxy, wrong, "X-Forwarded-For", "203.0.113.7"), 401, "")
	want(t, "via the proxy, client A again", a.get(proxy, wrong, "X-Forwarded-For", "203.0.113.7, 10.9.9.9"), 429, "1")
	want(t, "via the proxy, client B", a.get(proxy, wrong, "X-Forwarded-For", "203.0.113.8"), 401, "")
	want(t, "client A direct, claiming B", a.get("203.0.113.7:1", wrong, "X-Forwarded-For", "203.0.113.99"), 429, "1")
	// A private or loopback peer is no proxy unless named one.
	want(t, "192.168.1.5", a.get("192.168.1.5:1", wrong, "X-Forwarded-For", "203.0.113.50"), 401, "")
	want(t, "192.168.1.5 claiming another", a.get("192.168.1.5:1", wrong, "X-Forwarded-For", "203.0.113.51"), 429, "1")

	// With no proxy named, X-Forwarded-For is nobody's word.
	d := newThrottledApp(t, 1)
	want(t, "loopback claiming C", d.get("127.0.0.1:1", wrong, "X-Forwarded-For", "203.0.113.60"), 401, "")
	want(t, "loopback claiming D", d.get("127.0.0.1:1", wrong, "X-Forwarded-For", "203.0.113.61"), 429, "1")
}

// gate is a key source whose Current waits until n requests have asked it,
// then lets every one through: authenticate asks the throttle first, so all
// n pass its check before any of them is counted.
type gate struct {
	set  *apikey.Set
	left atomic.Int32  // requests still to ask
	all  chan struct{} // closed once they have
}

func newGate(set *apikey.Set, n int) *gate {
	g := &gate{set: set, all: make(chan struct{})}
	g.left.Store(int32(n))
	return g
}

func (g *gate) Current() *apikey.Set {
	if g.left.Add(-1) == 0 {
		close(g.all)
	}
	<-g.all
	return g.set
}

// TestThrottleDebt: guesses that passed the check together, before any of
// them was counted, are each counted: the address waits a second for every
// one beyond its budget (a bucket that stopped at empty would let the next
// wave through after one second).
func TestThrottleDebt(t *testing.T) {
	const guesses, burst = 20, 3
	a := throttledAppOf(t, burst, newGate(apikey.NewSet(apikey.Hash(testKey)), guesses))
	var wg sync.WaitGroup
	var mu sync.Mutex
	checked := 0 // guesses answered 401: their key was checked
	for range guesses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest(http.MethodGet, apitest.Path("/pets"), nil)
			req.RemoteAddr = guesser
			req.Header.Set("Authorization", wrong)
			rec := httptest.NewRecorder()
			a.app.ServeHTTP(rec, req)
			mu.Lock()
			defer mu.Unlock()
			if rec.Code == http.StatusUnauthorized {
				checked++
			}
		}()
	}
	wg.Wait()
	if checked != guesses {
		t.Fatalf("%d of %d guesses that passed the throttle together checked, want all", checked, guesses)
	}
	// The bucket holds burst - guesses tokens: one comes back each second,
	// and the next guess needs one.
	wantAfter := guesses - burst + 1
	want(t, "the next guess", a.get(guesser, wrong), 429, strconv.Itoa(wantAfter))
	a.clock.Advance(time.Duration(wantAfter-1) * time.Second)
	want(t, "a second before Retry-After", a.get(guesser, wrong), 429, "1")
	a.clock.Advance(time.Second)
	want(t, "at Retry-After", a.get(guesser, wrong), 401, "")
}
