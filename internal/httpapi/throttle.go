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

// maxThrottled bounds the client addresses the throttle holds, and the
// /48s (about 125 bytes each). Past it, an address takes the place of the
// one nearest to a full budget, never of one over its budget: while every
// address held is over its budget, every address not held is refused too
// (ratelimit.Store), until one has refilled. So no number of addresses
// sprayed lets a throttled one off; and since a /48 is held as one besides
// its /64s, filling the table takes at least 100 000 IPv4 addresses or
// some 400 /48s over their budgets at once (see siteClients).
const maxThrottled = 100_000

// siteClients is the budget of an IPv6 /48, in clients' budgets. An IPv6
// client is its /64 (a subscriber holds one whole: SLAAC needs it), but a
// subscriber is given more: a /56 or a /48 (RFC 6177), each /64 of which
// would have a budget of its own. So a /48 also has one budget for all of
// its /64s, siteClients times a client's: a site spraying its /64s guesses
// at most 256 clients' worth, and so keeps only about 256 /64s over their
// budgets in the table at once (each must spend its own first, and guess
// on to stay there), not 65 536.
// 256 is the /56s of a /48: an ISP that gives /56s puts 256 subscribers
// in one, who then wait with a neighbour who guesses 256 times their
// budget, as clients behind one IPv4 address do with one who guesses once.
const siteClients = 256

// throttle limits failed authentications, a wrong key, per client address:
// a token bucket per address, taken from by each failure, which refuses
// every request from the address, its key unchecked, while it is empty;
// and for an IPv6 address one more for its /48 (siteClients). It keys on
// the address, never on the key presented, so a guesser cannot lock out a
// valid key; a client that shares the guesser's address does wait (behind
// a proxy: Config.TrustedProxies).
//
// A request is only refused, never counted, before its key is checked: a
// valid key costs no token. So concurrent guesses may each pass the check
// while the bucket holds one token; each then takes one, and the bucket
// goes into debt that it must refill before the next check: over time,
// no address gets more checks than burst + rate x time.
type throttle struct {
	addr    func(*http.Request) netip.Addr
	buckets *ratelimit.Store[netip.Addr] // an IPv4 address or an IPv6 /64
	sites   *ratelimit.Store[netip.Addr] // an IPv6 /48
	refused prometheus.Counter
}

func newThrottle(l ratelimit.Limit, proxies []netip.Prefix, now func() time.Time) *throttle {
	site := ratelimit.Limit{Count: l.Count * siteClients, Per: l.Per, Burst: l.Burst * siteClients}
	return &throttle{
		addr:    clientAddr(proxies),
		buckets: ratelimit.NewBounded[netip.Addr](l, now, maxThrottled),
		sites:   ratelimit.NewBounded[netip.Addr](site, now, maxThrottled),
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
// address may try again, without taking from its buckets. With no address
// held it returns at once, taking no lock.
func (t *throttle) refuse(r *http.Request) (retryAfter int, refused bool) {
	if t.buckets.Len() == 0 && t.sites.Len() == 0 {
		return 0, false
	}
	a := t.addr(r)
	if q := t.buckets.Quota(a); q.Remaining < 1 {
		retryAfter, refused = q.RetryAfter, true
	}
	if s, ok := site(a); ok {
		if q := t.sites.Quota(s); q.Remaining < 1 {
			retryAfter, refused = max(retryAfter, q.RetryAfter), true
		}
	}
	if refused {
		t.refused.Inc()
	}
	return retryAfter, refused
}

// fail takes a token from the buckets of the request's address, into debt
// if it must.
func (t *throttle) fail(r *http.Request) {
	a := t.addr(r)
	t.buckets.Take(a)
	if s, ok := site(a); ok {
		t.sites.Take(s)
	}
}

// site returns the /48 of an IPv6 address; ok is false for IPv4.
func site(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	p, _ := a.Prefix(48)
	return p.Addr(), true
}

// clientAddr returns how the throttle names a request's client: its peer's
// address, or, when the peer is one of proxies, the nearest address in
// X-Forwarded-For that is not (Echo's extractor); an IPv6 address by its
// /64, which one client holds whole (see siteClients).
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
