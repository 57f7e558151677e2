package pgstore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/pets"
)

// TestTakeOneKeyPerBatch: take puts a key in a batch at most once; a second
// create with it waits for the next batch, and the creates behind it do
// not.
func TestTakeOneKeyPerBatch(t *testing.T) {
	ctx := context.Background()
	k := func() *pets.IdempotencyKey { return &pets.IdempotencyKey{Owner: "o", Key: "k"} }
	first, again, plain := &member{ctx: ctx, key: k()}, &member{ctx: ctx, key: k()}, &member{ctx: ctx}
	s := &Store{}
	for _, m := range []*member{first, again, plain} {
		s.queue.push(m)
	}
	if batch := s.take(); !slices.Equal(batch, []*member{first, plain}) {
		t.Fatalf("first batch: %v; want the first create with the key and the one without (%p, %p)", batch, first, plain)
	}
	if s.queue.len != 1 || again.state.Load() != queued {
		t.Fatalf("left waiting: %d (state %d); want the second create with the key, queued (%p)", s.queue.len, again.state.Load(), again)
	}
	if batch := s.take(); !slices.Equal(batch, []*member{again}) || s.queue.len != 0 {
		t.Fatalf("next batch: %v, left %d; want the second create with the key alone", batch, s.queue.len)
	}
}

// TestTakeKeyChain: creates with one key go one a batch, in order, each in
// the batch after the one before it, ahead of those that came later; one
// whose caller gave up is dropped and the next with its key goes on.
func TestTakeKeyChain(t *testing.T) {
	ctx := context.Background()
	gone, cancel := context.WithCancel(ctx)
	cancel()
	k := func() *pets.IdempotencyKey { return &pets.IdempotencyKey{Owner: "o", Key: "k"} }
	k1, k2, k3, k4 := &member{ctx: ctx, key: k()}, &member{ctx: gone, key: k()}, &member{ctx: ctx, key: k()}, &member{ctx: ctx, key: k()}
	a, b := &member{ctx: ctx}, &member{ctx: ctx}
	s := &Store{}
	for _, m := range []*member{k1, k2, a, k3, b, k4} {
		s.queue.push(m)
	}
	for i, want := range [][]*member{{k1, a, b}, {}, {k3}, {k4}} {
		if batch := s.take(); !slices.Equal(batch, want) {
			t.Fatalf("batch %d: %v; want %v (k1 %p k2 %p k3 %p k4 %p a %p b %p)", i+1, batch, want, k1, k2, k3, k4, a, b)
		}
	}
	if s.queue.len != 0 || len(s.queue.last) != 0 || k2.state.Load() != dropped {
		t.Fatalf("after: %d queued, %d keys remembered, the gone member's state %d", s.queue.len, len(s.queue.last), k2.state.Load())
	}
}

// TestTakeCostOfBatch: taking a batch costs the batch, not the queue (it
// used to rescan the whole queue, under the store's mutex, each batch).
func TestTakeCostOfBatch(t *testing.T) {
	cost := func(queued int) time.Duration {
		best := time.Duration(1 << 62)
		for range 5 {
			s := &Store{}
			m := &member{ctx: context.Background()} // one, queued again and again: only the batch's are taken
			for range queued {
				s.queue.push(m)
			}
			start := time.Now()
			s.take()
			best = min(best, time.Since(start))
		}
		return best
	}
	short, long := cost(2*maxBatch), cost(1000*maxBatch)
	if long > 10*short {
		t.Fatalf("one batch from a queue of %d: %v; from a queue of %d: %v (want about the same)", 1000*maxBatch, long, 2*maxBatch, short)
	}
}
