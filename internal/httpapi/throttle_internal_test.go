package httpapi

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/ratelimit"
)

// guesses makes n failures from addr (host:port) on th, and returns a
// request from addr.
func guesses(th *throttle, addr string, n int) *http.Request {
	r := httptest.NewRequest("GET", apitest.Path("/pets"), nil)
	r.RemoteAddr = addr
	for range n {
		th.fail(r)
	}
	return r
}

// TestThrottleDebtIsKept: failures past the budget put the bucket into
// debt, which the address waits out whole; buckets that have refilled are
// dropped, and with none held a request takes no lock.
func TestThrottleDebtIsKept(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	th := newThrottle(ratelimit.Limit{Count: 1, Per: time.Second, Burst: 3}, nil, func() time.Time { return now })
	r := guesses(th, "192.0.2.1:1", 10)
	if after, refused := th.refuse(r); !refused || after != 8 {
		t.Fatalf("10 failures, burst 3, 1/s: refused %v, retry after %d s; want 8 (7 owed, then 1)", refused, after)
	}
	now = now.Add(8 * time.Second)
	if _, refused := th.refuse(r); refused {
		t.Fatal("refused after the debt was paid")
	}
	now = now.Add(2 * time.Second)
	th.refuse(r) // sweeps: the bucket is full again
	if n := th.buckets.Len(); n != 0 {
		t.Fatalf("%d addresses held once all refilled, want 0", n)
	}
}

// TestThrottleBounded: past maxThrottled addresses, every one over its
// budget, the table stays at its bound, and a new address is refused.
func TestThrottleBounded(t *testing.T) {
	th := newThrottle(ratelimit.Limit{Count: 1, Per: time.Minute, Burst: 1}, nil, nil)
	r := httptest.NewRequest("GET", apitest.Path("/pets"), nil)
	for i := range maxThrottled + 1000 {
		r.RemoteAddr = "[2001:db8:" + strconv.FormatInt(int64(i>>16), 16) + ":" + strconv.FormatInt(int64(i&0xffff), 16) + "::1]:1"
		th.fail(r)
	}
	if n := th.buckets.Len(); n != maxThrottled {
		t.Fatalf("%d addresses held, want the bound %d", n, maxThrottled)
	}
	if _, refused := th.refuse(r); !refused {
		t.Fatal("a new address, with every address held over its budget, is not refused")
	}
}

// TestThrottleSprayKeepsDebt: an address over its budget stays refused
// however many other addresses guess meanwhile, past the table's bound.
func TestThrottleSprayKeepsDebt(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	th := newThrottle(ratelimit.Limit{Count: 1, Per: time.Minute, Burst: 2}, nil, func() time.Time { return now })
	r := guesses(th, "192.0.2.1:1", 3)
	if _, refused := th.refuse(r); !refused {
		t.Fatal("the guesser is not refused")
	}
	spray := httptest.NewRequest("GET", apitest.Path("/pets"), nil)
	for i := range 3 * maxThrottled {
		spray.RemoteAddr = netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).String() + ":1"
		th.fail(spray)
	}
	if after, refused := th.refuse(r); !refused || after != 120 {
		t.Fatalf("after a spray of %d addresses: refused %v, retry after %d s; want refused, 120 s", 3*maxThrottled, refused, after)
	}
}

// TestThrottleSite: the /64s of one /48 share a budget of their own, of
// siteClients clients: past it, every address of the /48 is refused, a /64
// that never guessed included; another /48 is not.
func TestThrottleSite(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	th := newThrottle(ratelimit.Limit{Count: 1, Per: time.Second, Burst: 3}, nil, func() time.Time { return now })
	r := httptest.NewRequest("GET", apitest.Path("/pets"), nil)
	from := func(addr string) *http.Request { r.RemoteAddr = "[" + addr + "]:1"; return r }
	for i := range 2 * siteClients {
		a := from("2001:db8:1:" + strconv.FormatInt(int64(i), 16) + "::1")
		for range 3 {
			if _, refused := th.refuse(a); !refused {
				th.fail(a)
			}
		}
	}
	if _, refused := th.refuse(from("2001:db8:1:ffff::1")); !refused {
		t.Fatal("a fresh /64 of a /48 that spent its budget is not refused")
	}
	if _, refused := th.refuse(from("2001:db8:2::1")); refused {
		t.Fatal("another /48 is refused")
	}
}
