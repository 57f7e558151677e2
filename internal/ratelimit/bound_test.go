package ratelimit

import (
	"testing"
	"time"
)

// TestStoreNeverForgetsDebt: a bounded store full of keys does not let a
// key in debt go for a newcomer, however many newcomers come.
func TestStoreNeverForgetsDebt(t *testing.T) {
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	s := NewBounded[int](Limit{Count: 1, Per: time.Minute, Burst: 1}, clk.Now, 1000)
	s.Take(0)
	s.Take(0) // one owed: two minutes to refill
	for i := 1; i <= 10_000; i++ {
		s.Take(i)
	}
	if q := s.Quota(0); q.Remaining != 0 || q.RetryAfter != 120 {
		t.Fatalf("the key in debt after a spray of 10 000 keys past a bound of 1 000: %+v; want nothing remaining, retry after 120 s", q)
	}
}

// TestStoreSweepsAll: once buckets have refilled, every one of them goes,
// maxSweep a call, the fullest first; no call waits for more.
func TestStoreSweepsAll(t *testing.T) {
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	const n = 20 * maxSweep
	s := NewBounded[int](Limit{Count: 1, Per: time.Second, Burst: 1}, clk.Now, 2*n)
	for i := range n {
		s.Take(i)
	}
	clk.Advance(2 * time.Second)
	for i := range n / maxSweep {
		s.Quota(-1)
		if got, want := s.Len(), n-(i+1)*maxSweep; got != want {
			t.Fatalf("call %d after every bucket refilled: %d held, want %d (maxSweep dropped a call)", i+1, got, want)
		}
	}
}
