package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) pets.Store { return memstore.New() })
}

// TestIdempotencyKeysExpire: the keys held are those within their TTL; each
// CreateOnce drops the expired ones, whatever order their TTLs put them in.
func TestIdempotencyKeysExpire(t *testing.T) {
	s := memstore.New()
	now := time.Unix(1_800_000_000, 0)
	memstore.SetClock(s, func() time.Time { return now })
	ctx := context.Background()
	create := func(key string, ttl time.Duration) {
		t.Helper()
		if _, _, err := s.CreateOnce(ctx, pets.NewPet{Name: "Rex", CategoryID: 1}, pets.IdempotencyKey{Owner: "o", Key: key, TTL: ttl}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 1000 {
		create(fmt.Sprintf("short-%d", i), time.Minute)
	}
	create("long", time.Hour)
	create("early", time.Second) // expires before the others, though recorded after them
	if n := s.Keys(); n != 1002 {
		t.Fatalf("keys: got %d, want 1002", n)
	}
	now = now.Add(2 * time.Second)
	create("a", time.Minute)
	if n := s.Keys(); n != 1002 {
		t.Fatalf("keys after 2s: got %d, want 1002 (early gone, a added)", n)
	}
	now = now.Add(time.Minute)
	create("b", time.Minute)
	if n := s.Keys(); n != 2 {
		t.Fatalf("keys after a minute: got %d, want 2 (long and b)", n)
	}
	// An expired key names a new create; the pet of the old one stays.
	if _, replayed, err := s.CreateOnce(ctx, pets.NewPet{Name: "Tom", CategoryID: 2}, pets.IdempotencyKey{Owner: "o", Key: "short-0", TTL: time.Minute}); err != nil || replayed {
		t.Fatalf("CreateOnce with an expired key: got replayed %v, %v; want a new pet", replayed, err)
	}
	if n, _ := s.Count(ctx); n != 1005 {
		t.Fatalf("pets: got %d, want 1005", n)
	}
}

// TestBoundedStore passes the behaviour suite with bounds far above what
// it stores: a bound changes nothing below it.
func TestBoundedStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) pets.Store {
		return memstore.New(memstore.WithMaxPets(memstore.DefaultMaxPets), memstore.WithMaxKeys(memstore.DefaultMaxKeys))
	})
}

// TestBounds: at the outcomes' bound a new key is refused with the time
// until the first outcome expires, and no kept outcome is dropped to make
// room; an unkeyed create still stores. At the pets' bound every new create
// is refused, ErrFull before KeysFullError. A kept key replays, or is
// refused as reused, at both bounds. A refusal stores nothing.
func TestBounds(t *testing.T) {
	s := memstore.New(memstore.WithMaxPets(3), memstore.WithMaxKeys(2))
	now := time.Unix(1_800_000_000, 0)
	memstore.SetClock(s, func() time.Time { return now })
	ctx := context.Background()
	rex := pets.NewPet{Name: "Rex", CategoryID: 1}
	key := func(k string) pets.IdempotencyKey { return pets.IdempotencyKey{Owner: "o", Key: k, TTL: time.Hour} }
	count := func() int64 {
		n, _ := s.Count(ctx)
		return n
	}

	first, _, err := s.CreateOnce(ctx, rex, key("a"))
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(10 * time.Minute)
	if _, _, err := s.CreateOnce(ctx, rex, key("b")); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.CreateOnce(ctx, rex, key("c"))
	var kf *pets.KeysFullError
	if !errors.As(err, &kf) || !errors.Is(err, pets.ErrKeysFull) || kf.Wait != 50*time.Minute {
		t.Fatalf("a third key: got %v, want a KeysFullError waiting 50m (a's expiry)", err)
	}
	if count() != 2 || s.Keys() != 2 {
		t.Fatalf("after the refusal: %d pets, %d keys; want 2, 2", count(), s.Keys())
	}
	if p, replayed, err := s.CreateOnce(ctx, rex, key("a")); err != nil || !replayed || p != first {
		t.Fatalf("replay of a at the keys' bound: got %+v, %v, %v; want %+v replayed", p, replayed, err, first)
	}
	if _, err := s.Create(ctx, rex); err != nil {
		t.Fatalf("an unkeyed create at the keys' bound: %v", err)
	}

	if _, err := s.Create(ctx, rex); !errors.Is(err, pets.ErrFull) {
		t.Fatalf("an unkeyed create at the pets' bound: got %v, want ErrFull", err)
	}
	if _, _, err := s.CreateOnce(ctx, rex, key("c")); !errors.Is(err, pets.ErrFull) {
		t.Fatalf("a new key at both bounds: got %v, want ErrFull", err)
	}
	if _, replayed, err := s.CreateOnce(ctx, rex, key("b")); err != nil || !replayed {
		t.Fatalf("replay of b at the pets' bound: got %v, %v", replayed, err)
	}
	if _, _, err := s.CreateOnce(ctx, pets.NewPet{Name: "Tom", CategoryID: 1}, key("b")); !errors.Is(err, pets.ErrKeyReused) {
		t.Fatalf("b for another pet at the bounds: got %v, want ErrKeyReused", err)
	}
	if count() != 3 {
		t.Fatalf("pets: got %d, want 3", count())
	}

	// Once the first outcome expires, its place is a new key's (a store
	// bounded in outcomes alone).
	roomy := memstore.New(memstore.WithMaxKeys(1))
	memstore.SetClock(roomy, func() time.Time { return now })
	if _, _, err := roomy.CreateOnce(ctx, rex, key("a")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := roomy.CreateOnce(ctx, rex, key("b")); !errors.Is(err, pets.ErrKeysFull) {
		t.Fatalf("b within a's TTL: got %v, want ErrKeysFull", err)
	}
	now = now.Add(time.Hour)
	if _, _, err := roomy.CreateOnce(ctx, rex, key("b")); err != nil {
		t.Fatalf("b once a expired: %v", err)
	}
}
