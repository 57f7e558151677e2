package broken

import (
	"context"
	"errors"
	"testing"

	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
)

// TestDirtyReadShowsRolledBack: a create it rolls back is answered
// unavailable, is not in the store, and reads show it all the same, in id
// order among the stored pets.
func TestDirtyReadShowsRolledBack(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	next := int64(100)
	rb := func(ctx context.Context, n pets.NewPet) (int64, error) { next++; return next, nil }
	p, err := New(DirtyRead, "")
	if err != nil {
		t.Fatal(err)
	}
	s := newDirtyRead(inner, rb, 1, p)
	if _, err := s.Create(ctx, pets.NewPet{Name: "ghost", CategoryID: 1, Status: pets.Sold}); !errors.Is(err, pets.ErrUnavailable) {
		t.Fatalf("a rolled-back create: %v, want unavailable", err)
	}
	if p.Fired() != 1 {
		t.Fatalf("the plant fired %d times, want once", p.Fired())
	}
	s.every = 1 << 30 // the rest are real
	for _, name := range []string{"a", "b"} {
		if _, err := s.Create(ctx, pets.NewPet{Name: name, CategoryID: 1, Status: pets.Sold}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := inner.Get(ctx, 101); !errors.Is(err, pets.ErrNotFound) {
		t.Fatalf("the store holds the rolled-back pet: %v", err)
	}
	if p, err := s.Get(ctx, 101); err != nil || p.Name != "ghost" {
		t.Fatalf("get 101: %+v %v, want the rolled-back pet", p, err)
	}
	page, err := s.List(ctx, pets.Query{Limit: 2})
	if err != nil || len(page.Pets) != 2 || !page.More || page.Pets[0].Name != "a" || page.Pets[1].Name != "b" {
		t.Fatalf("first page: %+v %v", page, err)
	}
	page, err = s.List(ctx, pets.Query{After: 2, Limit: 2, Status: pets.Sold})
	if err != nil || len(page.Pets) != 1 || page.Pets[0].ID != 101 {
		t.Fatalf("second page: %+v %v, want the rolled-back pet", page, err)
	}
}
