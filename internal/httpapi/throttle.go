package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

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
	addr    func(*http.Request) netip.Addr
	buckets *ratelimit.Store[netip.Addr] // swept every second
	refused prometheus.Counter
}

func newThrottle(l ratelimit.Limit, proxies []netip.Prefix, now func() time.Time) *throttle {
	return &throttle{
		addr:    clientAddr(proxies),
		buckets: ratelimit.NewBounded[netip.Addr](l, now, maxThrottled, time.Second),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "petstore_auth_throttled_total",
			Help: "Requests refused 429, their key unchecked, because their client address sent too many wrong keys.",
		}),
	}
}

// collectors are the throttle's metrics: the refusals and the addresses held.
func (t *throttle) collectors() []prometheus.Collector {
	held := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "petstore_auth_throttle_addresses",
		Help: "Client addresses whose wrong keys the throttle holds (each until its budget has refilled).",
	}, func() float64 { return float64(t.buckets.Len()) })
	return []prometheus.Collector{t.refused, held}
}

// refuse reports whether the request is refused, and the seconds until its
// address may try again, without taking from its bucket. With no address
// held it returns at once, taking no lock.
func (t *throttle) refuse(r *http.Request) (retryAfter int, refused bool) {
	if t.buckets.Len() == 0 {
		return 0, false
	}
	q := t.buckets.Quota(t.addr(r))
	if q.Remaining >= 1 {
		return 0, false
	}
	t.refused.Inc()
	return q.RetryAfter, true
}

// fail takes a token from the bucket of the request's address, into debt
// if it must.
func (t *throttle) fail(r *http.Request) { t.buckets.Take(t.addr(r)) }

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
