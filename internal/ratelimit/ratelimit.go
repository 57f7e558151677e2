// Package ratelimit limits requests per key with a token bucket per key,
// kept as GCRA keeps one (the time it is full again), and reports each
// key's quota in the terms of the RateLimit-* and Retry-After headers.
//
// A Store[string] (New) satisfies Echo's middleware.RateLimiterStore, so
// Echo's rate-limiter middleware decides; Echo's own memory store is not used
// because its Allow reports only yes or no, while the headers need the
// remaining quota and the time until it refills, and because its clock cannot
// be set by a test. A bounded Store of any key (NewBounded) serves a limit
// on keys a client chooses, such as its address.
package ratelimit

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of a Limit, so that every header value stays within the ranges
// openapi.yaml declares (RateLimit-Limit at most 1 000 000, RateLimit-Reset
// and Retry-After at most 86 400 seconds).
const (
	MaxCount  = 1_000_000
	MaxBurst  = 1_000_000
	MaxRefill = 24 * time.Hour // time for an empty bucket to fill
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
func (l Limit) rate() float64 { return float64(l.Count) / l.Per.Seconds() }

// refill is how long an empty bucket takes to fill.
func (l Limit) refill() time.Duration {
	return time.Duration(float64(l.Burst) / l.rate() * float64(time.Second))
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

// maxSweep bounds the refilled buckets one call drops, so that no call
// waits for a sweep of a whole table; each call drops up to that many, and
// at most one bucket is made per call, so no refilled bucket stays for
// long.
const maxSweep = 1024

// Store holds one token bucket per key, safe for concurrent use.
//
// A bucket is the time it is full again (the "theoretical arrival time" of
// GCRA, the generic cell rate algorithm): each request taken moves it one
// interval (Per / Count) later, from now at the earliest; until then the
// bucket lacks one token per interval. All buckets refill at one rate, so
// the order of those times is the order of the buckets from fullest to
// emptiest, and stays so as time passes: the buckets are kept in a heap of
// it. A full bucket and a new one are the same, so refilled buckets are
// dropped, fullest first (the top of the heap), every one of them, a few
// on each call: memory is bounded by the keys active within one refill
// time.
//
// A Store made by NewBounded also holds at most its bound of buckets. A new
// key past the bound takes the place of the fullest bucket, unless that one
// refuses requests too (less than one token): a key over its budget is
// never forgotten to make room, since a forgotten bucket reads as a full
// one. Then the new key is not held: every key not held is refused, with
// Retry-After the time until the fullest bucket allows a request again,
// until there is room.
type Store[K comparable] struct {
	limit    Limit
	interval time.Duration // one token
	now      func() time.Time
	maxKeys  int          // buckets held at most; 0: no bound
	held     atomic.Int64 // len(buckets), read without mu

	mu      sync.Mutex
	buckets map[K]*bucket[K]
	order   byFull[K] // the buckets, a heap by full: the fullest first
}

// bucket is one key's bucket: full is when it has refilled.
type bucket[K comparable] struct {
	key  K
	full time.Time
	at   int // index in Store.order
}

// New returns a Store that allows each key the rate l, reading time from now
// (time.Now when nil). Its Allow is Echo's middleware.RateLimiterStore's.
func New(l Limit, now func() time.Time) *Store[string] {
	return newStore[string](l, now, 0)
}

// NewBounded returns a Store of the rate l that holds at most maxKeys
// buckets (see Store for what happens past it).
func NewBounded[K comparable](l Limit, now func() time.Time, maxKeys int) *Store[K] {
	return newStore[K](l, now, maxKeys)
}

func newStore[K comparable](l Limit, now func() time.Time, maxKeys int) *Store[K] {
	if now == nil {
		now = time.Now
	}
	return &Store[K]{
		limit: l, interval: l.Per / time.Duration(l.Count), now: now, maxKeys: maxKeys,
		buckets: map[K]*bucket[K]{},
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
	b := s.bucket(key, now)
	if b == nil || s.tokens(b, now) < 1 {
		return false, nil
	}
	s.take(b, now)
	return true, nil
}

// Take takes one request from key's bucket, into debt when it is empty: the
// bucket must refill the debt before it allows the next request. A key
// the store has no room for is not counted (it is refused all the same).
func (s *Store[K]) Take(key K) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if b := s.bucket(key, now); b != nil {
		s.take(b, now)
	}
}

// Quota reports key's bucket as it is now, without taking from it.
func (s *Store[K]) Quota(key K) Quota {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.sweep(now)
	tokens := float64(s.limit.Burst)
	if b, ok := s.buckets[key]; ok {
		tokens = s.tokens(b, now)
	} else if s.full(now) {
		// No room: refused as long as the fullest bucket is, which then
		// makes room.
		tokens = s.tokens(s.order[0], now)
	}
	perSecond := s.limit.rate()
	return Quota{
		Limit:      s.limit.Burst,
		Remaining:  max(0, int(math.Floor(tokens))),
		Reset:      seconds((float64(s.limit.Burst) - tokens) / perSecond),
		RetryAfter: retrySeconds((1 - tokens) / perSecond),
	}
}

// Len returns the number of buckets held. It takes no lock.
func (s *Store[K]) Len() int { return int(s.held.Load()) }

// tokens is what b holds at now: the burst less a token for each interval
// until it is full, below zero for a bucket in debt.
func (s *Store[K]) tokens(b *bucket[K], now time.Time) float64 {
	return float64(s.limit.Burst) - float64(b.full.Sub(now))/float64(s.interval)
}

// take takes a token from b, into debt if it must; the caller holds mu.
func (s *Store[K]) take(b *bucket[K], now time.Time) {
	if b.full.Before(now) {
		b.full = now
	}
	b.full = b.full.Add(s.interval)
	heap.Fix(&s.order, b.at)
}

// full reports whether a bounded store holds its bound of buckets, and the
// fullest of them refuses requests: no bucket may go for a new key. The
// caller holds mu and has swept.
func (s *Store[K]) full(now time.Time) bool {
	return s.maxKeys > 0 && len(s.order) >= s.maxKeys && s.tokens(s.order[0], now) < 1
}

// bucket returns key's bucket, made full when there is none, having swept;
// nil when the store has no room for it (full). The caller holds mu.
func (s *Store[K]) bucket(key K, now time.Time) *bucket[K] {
	s.sweep(now)
	if b, ok := s.buckets[key]; ok {
		return b
	}
	if s.full(now) {
		return nil
	}
	if s.maxKeys > 0 && len(s.order) >= s.maxKeys {
		delete(s.buckets, heap.Pop(&s.order).(*bucket[K]).key) // the fullest, not refusing
	}
	b := &bucket[K]{key: key, full: now}
	s.buckets[key] = b
	heap.Push(&s.order, b)
	s.held.Store(int64(len(s.order)))
	return b
}

// sweep drops up to maxSweep buckets that have refilled, the fullest
// first; the caller holds mu.
func (s *Store[K]) sweep(now time.Time) {
	for i := 0; i < maxSweep && len(s.order) > 0 && !s.order[0].full.After(now); i++ {
		delete(s.buckets, heap.Pop(&s.order).(*bucket[K]).key)
	}
	s.held.Store(int64(len(s.order)))
}

// byFull is a heap (container/heap) of buckets, the earliest full first.
type byFull[K comparable] []*bucket[K]

func (h byFull[K]) Len() int           { return len(h) }
func (h byFull[K]) Less(i, j int) bool { return h[i].full.Before(h[j].full) }
func (h byFull[K]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].at, h[j].at = i, j
}
func (h *byFull[K]) Push(x any) {
	b := x.(*bucket[K])
	b.at = len(*h)
	*h = append(*h, b)
}
func (h *byFull[K]) Pop() any {
	old := *h
	b := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return b
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
