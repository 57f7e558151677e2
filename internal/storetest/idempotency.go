package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/pets"
)

// key is an idempotency key of owner "alice", kept for an hour.
func key(k string) pets.IdempotencyKey {
	return pets.IdempotencyKey{Owner: "alice", Key: k, TTL: time.Hour}
}

// all lists every pet of s.
func all(t *testing.T, s pets.Store) []pets.Pet {
	t.Helper()
	var out []pets.Pet
	q := pets.Query{Limit: pets.MaxLimit}
	for {
		page := mustList(t, s, q)
		out = append(out, page.Pets...)
		if !page.More {
			return out
		}
		q.After = page.Pets[len(page.Pets)-1].ID
	}
}

func createOnce(t *testing.T, s pets.Store, n pets.NewPet, k pets.IdempotencyKey) (pets.Pet, bool) {
	t.Helper()
	p, replayed, err := s.CreateOnce(context.Background(), n, k)
	if err != nil {
		t.Fatalf("CreateOnce(%+v, %q/%q): %v", n, k.Owner, k.Key, err)
	}
	return p, replayed
}

// testIdempotentCreate: the same key and request replay the first outcome,
// whatever the form of the request; nothing new is stored.
func testIdempotentCreate(t *testing.T, s pets.Store) {
	first, replayed := createOnce(t, s, pets.NewPet{Name: "Rex", CategoryID: 3}, key("k1"))
	if replayed || first.ID < 1 || first.Status != pets.Available {
		t.Fatalf("first CreateOnce: got %+v, replayed %v; want a new available pet, not replayed", first, replayed)
	}
	for _, n := range []pets.NewPet{
		{Name: "Rex", CategoryID: 3},
		{Name: "Rex", CategoryID: 3, Status: pets.Available}, // the default, spelt out
	} {
		p, replayed := createOnce(t, s, n, key("k1"))
		if !replayed || p != first {
			t.Fatalf("retry %+v: got %+v, replayed %v; want %+v replayed", n, p, replayed, first)
		}
	}
	// A plain Create is not affected by the key, nor the key by it.
	plain := mustCreate(t, s, pets.NewPet{Name: "Rex", CategoryID: 3})
	if p, replayed := createOnce(t, s, pets.NewPet{Name: "Rex", CategoryID: 3}, key("k1")); !replayed || p != first {
		t.Fatalf("retry after a plain create: got %+v, replayed %v; want %+v replayed", p, replayed, first)
	}
	if got := all(t, s); len(got) != 2 || got[0] != first || got[1] != plain {
		t.Fatalf("after retries: got %+v, want [%+v %+v]", got, first, plain)
	}
}

// testIdempotentKeyReused: the same key with another request is refused and
// stores nothing; a request the store refuses records no key.
func testIdempotentKeyReused(t *testing.T, s pets.Store) {
	first, _ := createOnce(t, s, pets.NewPet{Name: "Rex", CategoryID: 3}, key("k1"))
	for _, n := range []pets.NewPet{
		{Name: "Rex", CategoryID: 4},
		{Name: "Rex ", CategoryID: 3},
		{Name: "Rex", CategoryID: 3, Status: pets.Sold},
	} {
		if p, _, err := s.CreateOnce(context.Background(), n, key("k1")); !errors.Is(err, pets.ErrKeyReused) {
			t.Fatalf("CreateOnce(%+v) with a used key: got %+v, %v; want ErrKeyReused", n, p, err)
		}
	}
	var ve *pets.ValidationError
	if _, _, err := s.CreateOnce(context.Background(), pets.NewPet{Name: "", CategoryID: 1}, key("k2")); !errors.As(err, &ve) {
		t.Fatalf("CreateOnce of an invalid pet: got %v, want a *pets.ValidationError", err)
	}
	second, replayed := createOnce(t, s, pets.NewPet{Name: "Tom", CategoryID: 1}, key("k2"))
	if replayed {
		t.Fatalf("CreateOnce after a refused one with the same key: got a replay of %+v, want a new pet", second)
	}
	if got := all(t, s); len(got) != 2 || got[0] != first || got[1] != second {
		t.Fatalf("after refusals: got %+v, want [%+v %+v]", got, first, second)
	}
}

// testIdempotentOwners: keys are scoped to their owner.
func testIdempotentOwners(t *testing.T, s pets.Store) {
	n := pets.NewPet{Name: "Rex", CategoryID: 3}
	a, _ := createOnce(t, s, n, key("shared"))
	bob := key("shared")
	bob.Owner = "bob"
	b, replayed := createOnce(t, s, n, bob)
	if replayed || b.ID == a.ID {
		t.Fatalf("another owner's CreateOnce with the same key: got %+v, replayed %v; want a pet of its own, not %d", b, replayed, a.ID)
	}
	// Nor can it be refused for another owner's request.
	if _, _, err := s.CreateOnce(context.Background(), pets.NewPet{Name: "Tom", CategoryID: 1}, key("shared")); !errors.Is(err, pets.ErrKeyReused) {
		t.Fatalf("owner alice, used key, another request: got %v, want ErrKeyReused", err)
	}
	if p, replayed := createOnce(t, s, n, key("shared")); !replayed || p != a {
		t.Fatalf("alice's retry: got %+v, replayed %v; want %+v replayed", p, replayed, a)
	}
}

// testIdempotentExpiry: after its TTL a key is forgotten and may name a new
// request.
func testIdempotentExpiry(t *testing.T, s pets.Store) {
	short := pets.IdempotencyKey{Owner: "alice", Key: "brief", TTL: 200 * time.Millisecond}
	first, _ := createOnce(t, s, pets.NewPet{Name: "Rex", CategoryID: 1}, short)
	var second pets.Pet
	apitest.Eventually(t, "the key to expire", func() bool {
		p, replayed, err := s.CreateOnce(context.Background(), pets.NewPet{Name: "Tom", CategoryID: 2}, short)
		if errors.Is(err, pets.ErrKeyReused) {
			return false
		}
		if err != nil || replayed {
			t.Fatalf("CreateOnce after expiry: got %+v, replayed %v, %v; want a new pet", p, replayed, err)
		}
		second = p
		return true
	})
	if second.ID <= first.ID || second.Name != "Tom" {
		t.Fatalf("after expiry: got %+v, want a new pet Tom after %d", second, first.ID)
	}
	if p, replayed := createOnce(t, s, pets.NewPet{Name: "Tom", CategoryID: 2}, short); !replayed || p != second {
		t.Fatalf("retry of the new request: got %+v, replayed %v; want %+v replayed", p, replayed, second)
	}
}

// testIdempotentConcurrent: many calls with one key at once store one pet;
// each call gets that pet or ErrKeyInFlight, and exactly one is not a replay.
func testIdempotentConcurrent(t *testing.T, s pets.Store) {
	const workers = 16
	n := pets.NewPet{Name: "Rex", CategoryID: 3}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		ids      = map[int64]int{}
		fresh    int
		inFlight int
	)
	start := make(chan struct{})
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			p, replayed, err := s.CreateOnce(context.Background(), n, key("race"))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, pets.ErrKeyInFlight):
				inFlight++
			case err != nil:
				t.Errorf("CreateOnce: %v", err)
			default:
				ids[p.ID]++
				if !replayed {
					fresh++
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	got := all(t, s)
	if len(got) != 1 {
		t.Fatalf("after %d concurrent calls with one key: %d pets stored, want 1", workers, len(got))
	}
	if len(ids) != 1 || ids[got[0].ID]+inFlight != workers || fresh != 1 {
		t.Fatalf("answers: ids %v, %d fresh, %d in flight; want one id (%d), one fresh, the rest replays or in flight", ids, fresh, inFlight, got[0].ID)
	}
	t.Logf("%d concurrent calls: %d created, %d replayed, %d in flight", workers, fresh, workers-fresh-inFlight, inFlight)
}
