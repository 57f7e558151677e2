package broken_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/petstore/petstore/internal/chaos/broken"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
)

// plant returns the plant of kind, its evidence in a file of the test's.
func plant(t *testing.T, kind string) (*broken.Plant, string) {
	t.Helper()
	evidence := filepath.Join(t.TempDir(), "evidence")
	p, err := broken.New(kind, evidence)
	if err != nil {
		t.Fatal(err)
	}
	return p, evidence
}

// took fails unless the evidence file says kind took effect as want.
func took(t *testing.T, evidence, kind string, want bool) {
	t.Helper()
	got, err := broken.Took(evidence, kind)
	if err != nil || got != want {
		t.Fatalf("evidence of %s: %v, %v; want %v", kind, got, err, want)
	}
}

func TestUnknownKind(t *testing.T) {
	if _, err := broken.New("nolocks", ""); err == nil {
		t.Fatal("an unknown kind: got no error")
	}
}

// TestEvidence: the evidence file holds the kinds recorded, and nothing
// when none was.
func TestEvidence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "evidence")
	took(t, path, broken.FsyncOff, false)
	if err := broken.Record(path, broken.FsyncOff); err != nil {
		t.Fatal(err)
	}
	took(t, path, broken.FsyncOff, true)
	took(t, path, broken.NoLock, false)
}

func TestAsyncCommitURL(t *testing.T) {
	p, _ := plant(t, broken.AsyncCommit)
	other, _ := plant(t, broken.NoKey)
	for _, u := range []string{
		"postgres://u:p@127.0.0.1:5432/db?sslmode=disable",
		"host=127.0.0.1 port=5432 dbname=db sslmode=disable",
	} {
		got, err := p.URL(u)
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
		if same, _ := other.URL(u); same != u {
			t.Errorf("nokey changed the URL: %q", same)
		}
	}
}

func TestNoKeyCreatesTwice(t *testing.T) {
	ctx := context.Background()
	p, evidence := plant(t, broken.NoKey)
	s := p.Store("", memstore.New())
	n := pets.NewPet{Name: "Rex", CategoryID: 1}
	k := pets.IdempotencyKey{Owner: "o", Key: "k", TTL: 60e9}
	took(t, evidence, broken.NoKey, false)
	a, _, err := s.CreateOnce(ctx, n, k)
	if err != nil {
		t.Fatal(err)
	}
	b, replayed, err := s.CreateOnce(ctx, n, k)
	if err != nil || replayed || a.ID == b.ID {
		t.Fatalf("second CreateOnce: %+v replayed %v err %v; want a new pet", b, replayed, err)
	}
	took(t, evidence, broken.NoKey, true)
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

// TestNoUnknownHidesTheUnknown: nounknown answers an unknown outcome as
// nothing written, and says it took effect then, and only then.
func TestNoUnknownHidesTheUnknown(t *testing.T) {
	lost := fmt.Errorf("commit: %w: %w: EOF", pets.ErrUnavailable, pets.ErrOutcomeUnknown)
	p, evidence := plant(t, broken.NoUnknown)
	if _, err := p.Store("", failing{memstore.New(), pets.ErrUnavailable}).Create(context.Background(), pets.NewPet{}); !errors.Is(err, pets.ErrUnavailable) {
		t.Fatalf("a known refusal: got %v", err)
	}
	took(t, evidence, broken.NoUnknown, false)
	_, err := p.Store("", failing{memstore.New(), lost}).Create(context.Background(), pets.NewPet{Name: "Rex", CategoryID: 1})
	if errors.Is(err, pets.ErrOutcomeUnknown) || !errors.Is(err, pets.ErrUnavailable) {
		t.Fatalf("got %v; want unavailable, not unknown", err)
	}
	took(t, evidence, broken.NoUnknown, true)
	none, _ := plant(t, "")
	if _, err := none.Store("", failing{memstore.New(), lost}).Create(context.Background(), pets.NewPet{}); !errors.Is(err, pets.ErrOutcomeUnknown) {
		t.Fatalf("no kind: got %v, want the error unchanged", err)
	}
}
