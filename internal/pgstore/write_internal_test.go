package pgstore

import (
	"context"
	"slices"
	"testing"

	"github.com/petstore/petstore/internal/pets"
)

// TestTakeOneKeyPerBatch: take puts a key in a batch at most once; a second
// create with it waits for the next batch, and the creates behind it do
// not.
func TestTakeOneKeyPerBatch(t *testing.T) {
	ctx := context.Background()
	k := func() *pets.IdempotencyKey { return &pets.IdempotencyKey{Owner: "o", Key: "k"} }
	first, again, plain := &member{ctx: ctx, key: k()}, &member{ctx: ctx, key: k()}, &member{ctx: ctx}
	s := &Store{waiting: []*member{first, again, plain}}
	if batch := s.take(); !slices.Equal(batch, []*member{first, plain}) {
		t.Fatalf("first batch: %v; want the first create with the key and the one without (%p, %p)", batch, first, plain)
	}
	if !slices.Equal(s.waiting, []*member{again}) || again.state.Load() != queued {
		t.Fatalf("left waiting: %v (state %d); want the second create with the key, queued (%p)", s.waiting, again.state.Load(), again)
	}
	if batch := s.take(); !slices.Equal(batch, []*member{again}) || len(s.waiting) != 0 {
		t.Fatalf("next batch: %v, left %v; want the second create with the key alone", batch, s.waiting)
	}
}
