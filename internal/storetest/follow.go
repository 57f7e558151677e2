package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/petstore/petstore/internal/pets"
)

// testFollow runs Follow on one store.
func testFollow(t *testing.T, s pets.Store) { Follow(t, s) }

// Follow is the pagination guarantee under concurrent creates: while
// writers create pets through every store in replicas (replicas of one
// catalogue) at once, a reader follows the cursor to the end again and
// again, alternating replicas. Every id it is given is unique, it sees ids
// strictly ascending, and it sees every acknowledged pet exactly once, as
// acknowledged: it fails when a pet with a smaller id can become visible
// after a larger one (ids not in commit order).
func Follow(t *testing.T, replicas ...pets.Store) {
	t.Helper()
	ctx := context.Background()
	const writersPerReplica, each = 4, 60
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked = map[int64]pets.Pet{}
	)
	for r, s := range replicas {
		for w := range writersPerReplica {
			wg.Go(func() {
				for i := range each {
					p, err := s.Create(ctx, pets.NewPet{Name: fmt.Sprintf("r%d w%d #%d", r, w, i), CategoryID: 1})
					if err != nil {
						t.Errorf("Create: %v", err)
						return
					}
					mu.Lock()
					if _, dup := acked[p.ID]; dup {
						t.Errorf("id %d assigned twice", p.ID)
					}
					acked[p.ID] = p
					mu.Unlock()
				}
			})
		}
	}
	writing := make(chan struct{})
	go func() { wg.Wait(); close(writing) }()

	seen := map[int64]pets.Pet{}
	var last int64
	for turn, done := 0, false; !done; {
		select {
		case <-writing:
			done = true // one more pass to the end, then stop
		default:
		}
		for more := true; more; turn++ {
			page, err := replicas[turn%len(replicas)].List(ctx, pets.Query{After: last, Limit: 7})
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			for _, p := range page.Pets {
				if _, dup := seen[p.ID]; dup || p.ID <= last {
					t.Fatalf("pet %d seen twice or out of order (after %d)", p.ID, last)
				}
				seen[p.ID], last = p, p.ID
			}
			more = page.More
		}
	}
	if t.Failed() {
		return
	}
	var missed []int64
	for id, p := range acked {
		if seen[id] != p {
			missed = append(missed, id)
		}
	}
	slices.Sort(missed)
	if len(missed) > 0 || len(seen) != len(acked) {
		t.Fatalf("the follower saw %d pets of %d acknowledged; never saw (as acknowledged) %v", len(seen), len(acked), missed)
	}
}
