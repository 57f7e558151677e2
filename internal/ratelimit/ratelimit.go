// Package ratelimit limits requests per key with a token bucket per key
// (golang.org/x/time/rate), and reports each key's quota in the terms of the
// RateLimit-* and Retry-After headers.
//
// A Store[string] (New) satisfies Echo's middleware.RateLimiterStore, so
// Echo's rate-limiter middleware decides; Echo's own memory store is not used
// because its Allow reports only yes or no, while the headers need the
// remaining quota and the time until it refills, and because its clock cannot
// be set by a test. A bounded Store of any key (NewBounded) serves a limit
// on keys a client chooses, such as its address.
package ratelimit

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	Reset      int // seconds until the bucket is full again, at most 86 400
	RetryAfter int // seconds until the next request is allowed, 1 to 86 400
}

// maxSweep bounds the buckets one sweep of a bounded Store looks at, so that
// no call waits for a sweep of them all; map order, random, spreads the
// sweeps over the table.
const maxSweep = 1024

// Store holds one token bucket per key, safe for concurrent use. Buckets
// idle long enough to have refilled are dropped, since a full bucket and a
// new one are the same; so memory is bounded by the keys active within one
// refill time, and, for a Store made by NewBounded, by its bound.
type Store[K comparable] struct {
	limit    Limit
	now      func() time.Time
	maxKeys  int           // buckets held at most; 0: no bound
	sweepGap time.Duration // least time between sweeps
	sweepMax int           // buckets one sweep looks at; 0: all
	held     atomic.Int64  // len(buckets), read without mu

	mu        sync.Mutex
	buckets   map[K]*rate.Limiter
	lastSweep time.Time
}

// New returns a Store that allows each key the rate l, reading time from now
// (time.Now when nil). Its Allow is Echo's middleware.RateLimiterStore's.
func New(l Limit, now func() time.Time) *Store[string] {
	return newStore[string](l, now, 0, max(l.refill(), minSweepGap), 0)
}

// NewBounded returns a Store of the rate l that holds at most maxKeys
// buckets (past it, a random one makes room for a new key) and sweeps at
// most every sweepGap, looking at up to maxSweep buckets each time.
func NewBounded[K comparable](l Limit, now func() time.Time, maxKeys int, sweepGap time.Duration) *Store[K] {
	return newStore[K](l, now, maxKeys, sweepGap, maxSweep)
}

func newStore[K comparable](l Limit, now func() time.Time, maxKeys int, sweepGap time.Duration, sweepMax int) *Store[K] {
	if now == nil {
		now = time.Now
	}
	return &Store[K]{
		limit: l, now: now, maxKeys: maxKeys, sweepGap: sweepGap, sweepMax: sweepMax,
		buckets: map[K]*rate.Limiter{}, lastSweep: now(),
	}
}

// Limit returns the store's rate.
func (s *Store[K]) Limit() Limit { return s.limit }

// Allow takes one request from key's bucket and reports whether there was
// one to take. It is Echo's middleware.RateLimiterStore method.
func (s *Store[K]) Allow(key K) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	return s.bucket(key, now).AllowN(now, 1), nil
}

// Take takes one request from key's bucket, into debt when it is empty: the
// bucket must refill the debt before it allows the next request.
func (s *Store[K]) Take(key K) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.bucket(key, now).ReserveN(now, 1) // granted at once or later: either way, taken
}

// Quota reports key's bucket as it is now, without taking from it.
func (s *Store[K]) Quota(key K) Quota {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.sweep(now)
	tokens := float64(s.limit.Burst)
	if b, ok := s.buckets[key]; ok {
		tokens = b.TokensAt(now)
	}
	perSecond := float64(s.limit.rate())
	return Quota{
		Limit:      s.limit.Burst,
		Remaining:  max(0, int(math.Floor(tokens))),
		Reset:      seconds((float64(s.limit.Burst) - tokens) / perSecond),
		RetryAfter: retrySeconds((1 - tokens) / perSecond),
	}
}

// Len returns the number of buckets held. It takes no lock.
func (s *Store[K]) Len() int { return int(s.held.Load()) }

// bucket returns key's bucket, made full when there is none, having swept;
// the caller holds mu.
func (s *Store[K]) bucket(key K, now time.Time) *rate.Limiter {
	s.sweep(now)
	b, ok := s.buckets[key]
	if ok {
		return b
	}
	if s.maxKeys > 0 && len(s.buckets) >= s.maxKeys {
		for k := range s.buckets { // map order: a random one
			delete(s.buckets, k)
			break
		}
	}
	b = rate.NewLimiter(s.limit.rate(), s.limit.Burst)
	s.buckets[key] = b
	s.held.Store(int64(len(s.buckets)))
	return b
}

// sweep drops the buckets that have refilled, once sweepGap has passed
// since the last sweep; the caller holds mu.
func (s *Store[K]) sweep(now time.Time) {
	if now.Sub(s.lastSweep) < s.sweepGap {
		return
	}
	s.lastSweep = now
	seen := 0
	for key, b := range s.buckets {
		if seen == s.sweepMax && s.sweepMax > 0 {
			break
		}
		seen++
		if b.TokensAt(now) >= float64(s.limit.Burst) {
			delete(s.buckets, key)
		}
	}
	s.held.Store(int64(len(s.buckets)))
}

// maxSeconds bounds Reset and Retry-After, as openapi.yaml does.
const maxSeconds = int(MaxRefill / time.Second)

// RetrySeconds is d as the seconds of a Retry-After: rounded up, forgiving
// float error, and from 1 to 86 400.
func RetrySeconds(d time.Duration) int { return retrySeconds(d.Seconds()) }

func retrySeconds(x float64) int { return max(1, seconds(x)) }

// seconds rounds a number of seconds up to a whole one from 0 to
// maxSeconds, forgiving the float error of the bucket's arithmetic.
func seconds(x float64) int {
	switch {
	case x <= 1e-9:
		return 0
	case x >= float64(maxSeconds):
		return maxSeconds
	}
	return int(math.Ceil(x - 1e-9))
}
