package ratelimit

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a time source a test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Limit
	}{
		{"50/s", Limit{50, time.Second, 50}},
		{"50/s,burst=100", Limit{50, time.Second, 100}},
		{"100/m", Limit{100, time.Minute, 100}},
		{"1/m,burst=1", Limit{1, time.Minute, 1}},
		{"1/m,burst=1440", Limit{1, time.Minute, 1440}}, // refills in exactly 24 h
		{"1000000/s,burst=1000000", Limit{MaxCount, time.Second, MaxBurst}},
		{"010/s", Limit{10, time.Second, 10}},
	} {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q): got %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if back, err := Parse(got.String()); err != nil || back != got {
			t.Errorf("Parse(%q.String() = %q): got %+v, %v", tc.in, got.String(), back, err)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"", "want N/s or N/m"},
		{"50", "want N/s or N/m"},
		{"50/h", `unit "h"`},
		{"50/S", `unit "S"`},
		{"50/sec", `unit "sec"`},
		{"50/ s", `unit " s"`},
		{" 50/s", `count " 50"`},
		{"abc/s", `count "abc"`},
		{"1e3/s", `count "1e3"`},
		{"+5/s", `count "+5"`},
		{"-1/s", `count "-1"`},
		{"0/s", "count 0: want 1 to 1000000"},
		{"1000001/s", "count 1000001: want 1 to 1000000"},
		{"99999999999999999999/s", `count "99999999999999999999"`},
		{"50/s,", `"": want N/s`},
		{"50/s,burst=", `burst ""`},
		{"50/s,burst=0", "burst 0: want 1 to 1000000"},
		{"50/s,burst=1000001", "burst 1000001: want 1 to 1000000"},
		{"50/s,burst=100,x", `burst "100,x"`},
		{"50/s;burst=2", `unit "s;burst=2"`},
		{"50/s,Burst=2", `"Burst=2"`},
		{"1/m,burst=1441", "longer than 24h0m0s to refill"},
	} {
		_, err := Parse(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q): got %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

func TestStore(t *testing.T) {
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	s := New(Limit{Count: 6, Per: time.Minute, Burst: 3}, clk.Now) // a token every 10 s

	want := func(key string, allowed bool, q Quota) {
		t.Helper()
		if got, err := s.Allow(key); got != allowed || err != nil {
			t.Fatalf("Allow(%q): got %v, %v; want %v", key, got, err, allowed)
		}
		if got := s.Quota(key); got != q {
			t.Fatalf("Quota(%q): got %+v, want %+v", key, got, q)
		}
	}
	if got, want := s.Quota("a"), (Quota{Limit: 3, Remaining: 3, Reset: 0, RetryAfter: 1}); got != want {
		t.Fatalf("Quota of an unseen key: got %+v, want %+v", got, want)
	}
	want("a", true, Quota{Limit: 3, Remaining: 2, Reset: 10, RetryAfter: 1})
	want("a", true, Quota{Limit: 3, Remaining: 1, Reset: 20, RetryAfter: 1})
	want("a", true, Quota{Limit: 3, Remaining: 0, Reset: 30, RetryAfter: 10})
	want("a", false, Quota{Limit: 3, Remaining: 0, Reset: 30, RetryAfter: 10})
	want("b", true, Quota{Limit: 3, Remaining: 2, Reset: 10, RetryAfter: 1})

	clk.Advance(4 * time.Second)
	want("a", false, Quota{Limit: 3, Remaining: 0, Reset: 26, RetryAfter: 6})
	clk.Advance(6 * time.Second)
	want("a", true, Quota{Limit: 3, Remaining: 0, Reset: 30, RetryAfter: 10})

	// Buckets go once they have refilled: b has, a has not.
	if n := s.Len(); n != 1 {
		t.Fatalf("Len: got %d, want 1", n)
	}
	clk.Advance(time.Minute)
	want("c", true, Quota{Limit: 3, Remaining: 2, Reset: 10, RetryAfter: 1})
	if n := s.Len(); n != 1 {
		t.Fatalf("Len after a minute idle: got %d buckets, want 1 (only c)", n)
	}
	want("a", true, Quota{Limit: 3, Remaining: 2, Reset: 10, RetryAfter: 1})
}

// TestStoreBoundsMemory checks that many keys seen once do not stay.
func TestStoreBoundsMemory(t *testing.T) {
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	s := New(Limit{Count: 50, Per: time.Second, Burst: 100}, clk.Now)
	for i := range 10_000 {
		s.Allow("key" + strconv.Itoa(i))
	}
	if n := s.Len(); n != 10_000 {
		t.Fatalf("Len: got %d, want 10000", n)
	}
	clk.Advance(time.Minute)
	for range 10_000/maxSweep + 1 {
		s.Allow("last")
	}
	if n := s.Len(); n != 1 {
		t.Fatalf("Len after the keys refilled: got %d, want 1", n)
	}
}

func TestStoreConcurrent(t *testing.T) {
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	s := New(Limit{Count: 1, Per: time.Minute, Burst: 50}, clk.Now)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		allowed int
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if ok, _ := s.Allow("k"); ok {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
				s.Quota("k")
			}
		}()
	}
	wg.Wait()
	if allowed != 50 {
		t.Fatalf("160 requests against a burst of 50 with the clock stopped: %d allowed, want 50", allowed)
	}
}

// TestStoreTakeIntoDebt: Take counts past an empty bucket, and the debt is
// waited out whole; Allow stops at empty.
func TestStoreTakeIntoDebt(t *testing.T) {
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	s := NewBounded[int](Limit{Count: 1, Per: time.Second, Burst: 3}, clk.Now, 10)
	for range 10 {
		s.Take(1)
	}
	if got, want := s.Quota(1), (Quota{Limit: 3, Remaining: 0, Reset: 10, RetryAfter: 8}); got != want {
		t.Fatalf("10 taken at 1/s, burst 3: got %+v, want %+v (7 owed, then 1)", got, want)
	}
	clk.Advance(7 * time.Second)
	if ok, _ := s.Allow(1); ok {
		t.Fatal("allowed with the debt not yet paid")
	}
	clk.Advance(time.Second) // the debt paid, and one token back
	if ok, _ := s.Allow(1); !ok {
		t.Fatal("refused once the debt was paid")
	}
}

// TestStoreBounded: a bounded store holds at most its bound of keys; a new
// key takes the place of the fullest bucket, never of one that refuses a
// request; while every bucket refuses, a key not held is refused, until the
// fullest allows a request again.
func TestStoreBounded(t *testing.T) {
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	s := NewBounded[int](Limit{Count: 1, Per: time.Second, Burst: 2}, clk.Now, 3)
	want := func(key int, remaining, retryAfter int) {
		t.Helper()
		if q := s.Quota(key); q.Remaining != remaining || q.RetryAfter != retryAfter {
			t.Fatalf("Quota(%d): %+v; want %d remaining, retry after %d s", key, q, remaining, retryAfter)
		}
	}
	s.Take(1)
	s.Take(1) // empty: refuses for a second
	s.Take(2) // full again in a second
	clk.Advance(500 * time.Millisecond)
	s.Take(3) // full again in a second: 2 is the fullest
	s.Take(4)
	if n := s.Len(); n != 3 {
		t.Fatalf("Len: got %d, want the bound 3", n)
	}
	want(2, 2, 1) // forgotten: a new bucket
	want(1, 0, 1) // kept, though emptier than 2 was
	s.Take(3)
	s.Take(4) // every bucket held refuses now
	s.Take(5) // not held
	if n := s.Len(); n != 3 {
		t.Fatalf("Len: got %d, want the bound 3", n)
	}
	want(5, 0, 1) // refused while 1, the fullest, refuses: half a second
	want(1, 0, 1)
	clk.Advance(500 * time.Millisecond)
	s.Take(5) // 1 allows a request: 5 takes its place
	want(5, 1, 1)
	want(1, 2, 1)
}

func TestRetrySeconds(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int
	}{
		{-time.Second, 1}, {0, 1}, {time.Nanosecond, 1}, {time.Second, 1},
		{1500 * time.Millisecond, 2}, {2 * time.Second, 2}, {time.Minute, 60},
		{24 * time.Hour, 86400}, {30 * 24 * time.Hour, 86400}, {1<<63 - 1, 86400},
	} {
		if got := RetrySeconds(tc.d); got != tc.want {
			t.Errorf("RetrySeconds(%v): got %d, want %d", tc.d, got, tc.want)
		}
	}
}
