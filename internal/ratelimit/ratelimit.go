// Package ratelimit limits requests per key with a token bucket per key
// (golang.org/x/time/rate), and reports each key's quota in the terms of the
// RateLimit-* and Retry-After headers.
//
// The Store satisfies Echo's middleware.RateLimiterStore, so Echo's
// rate-limiter middleware decides; Echo's own memory store is not used
// because its Allow reports only yes or no, while the headers need the
// remaining quota and the time until it refills, and because its clock cannot
// be set by a test.
package ratelimit

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Bounds of a Limit, so that every header value stays within the ranges
// openapi.yaml declares (RateLimit-Limit at most 1 000 000, RateLimit-Reset
// and Retry-After at most 86 400 seconds).
const (
	MaxCount    = 1_000_000
	MaxBurst    = 1_000_000
	MaxRefill   = 24 * time.Hour // time for an empty bucket to fill
	minSweepGap = time.Minute
)

// Limit is a rate: Count requests per Per, with bursts of up to Burst.
type Limit struct {
	Count int
	Per   time.Duration // time.Second or time.Minute
	Burst int
}

// String returns l in the syntax Parse reads.
func (l Limit) String() string {
	unit := "s"
	if l.Per == time.Minute {
		unit = "m"
	}
	return fmt.Sprintf("%d/%s,burst=%d", l.Count, unit, l.Burst)
}

// rate is l in tokens per second.
func (l Limit) rate() rate.Limit { return rate.Limit(float64(l.Count) / l.Per.Seconds()) }

// refill is how long an empty bucket takes to fill.
func (l Limit) refill() time.Duration {
	return time.Duration(float64(l.Burst) / float64(l.rate()) * float64(time.Second))
}

var errSyntax = errors.New("want N/s or N/m, optionally followed by ,burst=B (e.g. 50/s or 50/s,burst=100)")

// Parse reads a limit written N/s or N/m (N requests a second or a minute),
// optionally followed by ,burst=B: up to B requests at once (default N).
func Parse(s string) (Limit, error) {
	rateText, burstText, hasBurst := strings.Cut(s, ",")
	countText, unit, ok := strings.Cut(rateText, "/")
	if !ok {
		return Limit{}, errSyntax
	}
	var l Limit
	switch unit {
	case "s":
		l.Per = time.Second
	case "m":
		l.Per = time.Minute
	default:
		return Limit{}, fmt.Errorf("unit %q: %w", unit, errSyntax)
	}
	var err error
	if l.Count, err = number(countText, "count", MaxCount); err != nil {
		return Limit{}, err
	}
	l.Burst = l.Count
	if hasBurst {
		b, ok := strings.CutPrefix(burstText, "burst=")
		if !ok {
			return Limit{}, fmt.Errorf("%q: %w", burstText, errSyntax)
		}
		if l.Burst, err = number(b, "burst", MaxBurst); err != nil {
			return Limit{}, err
		}
	}
	if l.refill() > MaxRefill {
		return Limit{}, fmt.Errorf("burst %d takes longer than %s to refill at %d/%s", l.Burst, MaxRefill, l.Count, unit)
	}
	return l, nil
}

func number(s, what string, max int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || s == "" || s[0] == '+' || s[0] == '-' {
		return 0, fmt.Errorf("%s %q: %w", what, s, errSyntax)
	}
	if n < 1 || n > max {
		return 0, fmt.Errorf("%s %d: want 1 to %d", what, n, max)
	}
	return n, nil
}

// Quota is the state of one key's bucket, in whole requests and seconds.
type Quota struct {
	Limit      int // the burst: requests a full bucket allows at once
	Remaining  int // requests allowed now
	Reset      int // seconds until the bucket is full again
	RetryAfter int // seconds until the next request is allowed, at least 1
}

// Store holds one token bucket per key, safe for concurrent use. Buckets
// idle long enough to have refilled are dropped, since a full bucket and a
// new one are the same; so memory is bounded by the keys active within one
// refill time.
type Store struct {
	limit Limit
	now   func() time.Time

	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
	lastSweep time.Time
	sweepGap  time.Duration
}

// New returns a Store that allows each key the rate l, reading time from now
// (time.Now when nil).
func New(l Limit, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{
		limit:     l,
		now:       now,
		buckets:   map[string]*rate.Limiter{},
		lastSweep: now(),
		sweepGap:  max(l.refill(), minSweepGap),
	}
}

// Limit returns the store's rate.
func (s *Store) Limit() Limit { return s.limit }

// Allow takes one request from key's bucket and reports whether there was
// one to take. It is Echo's middleware.RateLimiterStore method.
func (s *Store) Allow(key string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.sweep(now)
	b, ok := s.buckets[key]
	if !ok {
		b = rate.NewLimiter(s.limit.rate(), s.limit.Burst)
		s.buckets[key] = b
	}
	return b.AllowN(now, 1), nil
}

// Quota reports key's bucket as it is now, without taking from it.
func (s *Store) Quota(key string) Quota {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	b, ok := s.buckets[key]
	tokens := float64(s.limit.Burst)
	if ok {
		tokens = b.TokensAt(now)
	}
	perSecond := float64(s.limit.rate())
	return Quota{
		Limit:      s.limit.Burst,
		Remaining:  max(0, int(math.Floor(tokens))),
		Reset:      seconds((float64(s.limit.Burst) - tokens) / perSecond),
		RetryAfter: max(1, seconds((1-tokens)/perSecond)),
	}
}

// seconds rounds a non-negative number of seconds up, forgiving the float
// error of the bucket's arithmetic.
func seconds(x float64) int {
	if x <= 1e-9 {
		return 0
	}
	return int(math.Ceil(x - 1e-9))
}

// Len returns the number of buckets held.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.buckets)
}

// sweep drops the buckets that have refilled; the caller holds mu.
func (s *Store) sweep(now time.Time) {
	if now.Sub(s.lastSweep) < s.sweepGap {
		return
	}
	s.lastSweep = now
	for key, b := range s.buckets {
		if b.TokensAt(now) >= float64(s.limit.Burst) {
			delete(s.buckets, key)
		}
	}
}
