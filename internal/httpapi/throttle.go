package httpapi

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/petstore/petstore/internal/ratelimit"
)

// maxThrottled bounds the client addresses the throttle holds (about 200
// bytes each): past it, a random one makes room for the new one.
const maxThrottled = 100_000

// throttle limits failed authentications, a wrong key, per client address:
// a token bucket per address, taken from by each failure, which refuses
// every request from the address, its key unchecked, while it is empty.
// It keys on the address, never on the key presented, so a guesser cannot
// lock out a valid key; a client that shares the guesser's address does
// wait (behind a proxy: Config.TrustedProxies).
//
// A request is only refused, never counted, before its key is checked: a
// valid key costs no token. So concurrent guesses may each pass the check
// while the bucket holds one token; each then takes one, and the bucket
// goes into debt that it must refill before the next check: over time,
// no address gets more checks than burst + rate x time.
type throttle struct {
	limit ratelimit.Limit
	addr  func(*http.Request) netip.Addr
	now   func() time.Time

	held    atomic.Int64 // addresses held: while 0, no request takes mu
	refused prometheus.Counter

	mu        sync.Mutex
	buckets   map[netip.Addr]*rate.Limiter
	lastSweep time.Time
}

func newThrottle(l ratelimit.Limit, proxies []netip.Prefix, now func() time.Time) *throttle {
	if now == nil {
		now = time.Now
	}
	return &throttle{
		limit: l, addr: clientAddr(proxies), now: now,
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "petstore_auth_throttled_total",
			Help: "Requests refused 429, their key unchecked, because their client address sent too many wrong keys.",
		}),
		buckets: map[netip.Addr]*rate.Limiter{}, lastSweep: now(),
	}
}

// collectors are the throttle's metrics: the refusals and the addresses held.
func (t *throttle) collectors() []prometheus.Collector {
	held := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "petstore_auth_throttle_addresses",
		Help: "Client addresses whose wrong keys the throttle holds (each until its budget has refilled).",
	}, func() float64 { return float64(t.held.Load()) })
	return []prometheus.Collector{t.refused, held}
}

// perSecond is the refill rate in tokens a second.
func (t *throttle) perSecond() float64 {
	return float64(t.limit.Count) / t.limit.Per.Seconds()
}

// refuse reports whether the request from addr is refused, and the seconds
// until its address may try again, without taking from its bucket. With no
// address held it returns at once.
func (t *throttle) refuse(r *http.Request) (retryAfter int, refused bool) {
	if t.held.Load() == 0 {
		return 0, false
	}
	addr := t.addr(r)
	now := t.now()
	t.mu.Lock()
	t.sweep(now)
	b := t.buckets[addr]
	t.mu.Unlock()
	if b == nil {
		return 0, false
	}
	tokens := b.TokensAt(now)
	if tokens >= 1 {
		return 0, false
	}
	t.refused.Inc()
	after := math.Ceil((1 - tokens) / t.perSecond())
	return int(min(max(after, 1), 86400)), true
}

// fail takes a token from the bucket of the request's address, into debt
// if it must.
func (t *throttle) fail(r *http.Request) {
	addr := t.addr(r)
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweep(now)
	b := t.buckets[addr]
	if b == nil {
		if len(t.buckets) >= maxThrottled {
			for a := range t.buckets { // map order: a random one
				delete(t.buckets, a)
				break
			}
		}
		b = rate.NewLimiter(rate.Limit(t.perSecond()), t.limit.Burst)
		t.buckets[addr] = b
	}
	b.ReserveN(now, 1) // granted at once or later: either way, taken
	t.held.Store(int64(len(t.buckets)))
}

// sweep drops, at most once a second, the buckets that have refilled: a
// full bucket and none are the same. The caller holds mu.
func (t *throttle) sweep(now time.Time) {
	if now.Sub(t.lastSweep) < time.Second {
		return
	}
	t.lastSweep = now
	for a, b := range t.buckets {
		if b.TokensAt(now) >= float64(t.limit.Burst) {
			delete(t.buckets, a)
		}
	}
	t.held.Store(int64(len(t.buckets)))
}

// clientAddr returns how the throttle names a request's client: its peer's
// address, or, when the peer is one of proxies, the nearest address in
// X-Forwarded-For that is not (Echo's extractor); an IPv6 address by its
// /64, which one client usually holds whole.
func clientAddr(proxies []netip.Prefix) func(*http.Request) netip.Addr {
	extract := echo.ExtractIPDirect()
	if len(proxies) > 0 {
		opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
		for _, p := range proxies {
			opts = append(opts, echo.TrustIPRange(prefixNet(p)))
		}
		extract = echo.ExtractIPFromXFFHeader(opts...)
	}
	return func(r *http.Request) netip.Addr {
		a, err := netip.ParseAddr(extract(r))
		if err != nil {
			return netip.Addr{} // one bucket for every address that does not parse
		}
		if a = a.Unmap(); a.Is6() {
			p, _ := a.Prefix(64)
			return p.Addr()
		}
		return a
	}
}

func prefixNet(p netip.Prefix) *net.IPNet {
	p = p.Masked()
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

// throttled is the 429 of an address over its budget.
func throttled(retryAfterSeconds int) *apiError {
	return &apiError{
		Status:  http.StatusTooManyRequests,
		Code:    codeRateLimited,
		Message: fmt.Sprintf("too many requests with a wrong API key from this address; retry after %d s", retryAfterSeconds),
		cause:   retryAfter(retryAfterSeconds),
	}
}
