package broken_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/petstore/petstore/internal/chaos/broken"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
)

func TestAsyncCommitURL(t *testing.T) {
	for _, u := range []string{
		"postgres://u:p@127.0.0.1:5432/db?sslmode=disable",
		"host=127.0.0.1 port=5432 dbname=db sslmode=disable",
	} {
		got, err := broken.DatabaseURL(broken.AsyncCommit, u)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := pgxpool.ParseConfig(got)
		if err != nil {
			t.Fatalf("%q: %v", got, err)
		}
		if v := cfg.ConnConfig.RuntimeParams["synchronous_commit"]; v != "off" {
			t.Errorf("%q: synchronous_commit %q, want off", got, v)
		}
		if same, _ := broken.DatabaseURL(broken.NoKey, u); same != u {
			t.Errorf("nokey changed the URL: %q", same)
		}
	}
}

func TestNoKeyCreatesTwice(t *testing.T) {
	ctx := context.Background()
	s := broken.Store(broken.NoKey, "", memstore.New())
	n := pets.NewPet{Name: "Rex", CategoryID: 1}
	k := pets.IdempotencyKey{Owner: "o", Key: "k", TTL: 60e9}
	a, _, err := s.CreateOnce(ctx, n, k)
	if err != nil {
		t.Fatal(err)
	}
	b, replayed, err := s.CreateOnce(ctx, n, k)
	if err != nil || replayed || a.ID == b.ID {
		t.Fatalf("second CreateOnce: %+v replayed %v err %v; want a new pet", b, replayed, err)
	}
	// The control: a sound store answers the same key's second create with
	// a replay of the first.
	sound := memstore.New()
	first, _, err := sound.CreateOnce(ctx, n, k)
	if err != nil {
		t.Fatal(err)
	}
	again, replayed, err := sound.CreateOnce(ctx, n, k)
	if err != nil || !replayed || again.ID != first.ID {
		t.Fatalf("sound store, second CreateOnce: %+v replayed %v err %v; want a replay of %+v", again, replayed, err, first)
	}
}

// failing is a store whose creates fail with err.
type failing struct {
	pets.Store
	err error
}

func (f failing) Create(context.Context, pets.NewPet) (pets.Pet, error) { return pets.Pet{}, f.err }

func TestNoUnknownHidesTheUnknown(t *testing.T) {
	lost := fmt.Errorf("commit: %w: %w: EOF", pets.ErrUnavailable, pets.ErrOutcomeUnknown)
	s := broken.Store(broken.NoUnknown, "", failing{memstore.New(), lost})
	_, err := s.Create(context.Background(), pets.NewPet{Name: "Rex", CategoryID: 1})
	if errors.Is(err, pets.ErrOutcomeUnknown) || !errors.Is(err, pets.ErrUnavailable) {
		t.Fatalf("got %v; want unavailable, not unknown", err)
	}
	sound := broken.Store("", "", failing{memstore.New(), lost})
	if _, err := sound.Create(context.Background(), pets.NewPet{}); !errors.Is(err, pets.ErrOutcomeUnknown) {
		t.Fatalf("no kind: got %v, want the error unchanged", err)
	}
}
