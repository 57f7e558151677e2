package memstore_test

import (
	"context"
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
