package httpapi

import (
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/ratelimit"
)

// TestThrottleDebtIsKept: failures past the budget put the bucket into
// debt, which the address waits out whole; buckets that have refilled are
// dropped, and with none held a request takes no lock.
func TestThrottleDebtIsKept(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	th := newThrottle(ratelimit.Limit{Count: 1, Per: time.Second, Burst: 3}, nil, func() time.Time { return now })
	r := httptest.NewRequest("GET", apitest.Path("/pets"), nil)
	r.RemoteAddr = "192.0.2.1:1"
	for range 10 {
		th.fail(r)
	}
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

// TestThrottleBounded: past maxThrottled addresses, new ones still count,
// and the table stays at its bound.
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
		t.Fatal("the newest address is not held")
	}
}
