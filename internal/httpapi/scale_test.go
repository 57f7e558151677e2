package httpapi_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
)

// TestWalkLargeCatalogue follows Link rel="next" through a catalogue of
// 10 000 pets, unfiltered and for each status, through the full app and the
// contract checker, and checks each walk sees every pet it selects exactly
// once, in id order, as stored. The store is filled directly: 10 000 POSTs
// would test nothing more and take long under the race detector.
func TestWalkLargeCatalogue(t *testing.T) {
	const n = 10_000
	store := memstore.New()
	stored := seedStore(t, store, n)
	c := newClient(t, store)
	for _, tc := range []struct {
		status pets.Status
		limit  int
	}{
		{"", 100},
		{"", 37}, // a last page that is not full
		{pets.Available, 100},
		{pets.Pending, 64},
		{pets.Sold, 100},
	} {
		t.Run(fmt.Sprintf("status=%s/limit=%d", tc.status, tc.limit), func(t *testing.T) {
			var want []gen.Pet
			for _, p := range stored {
				if tc.status == "" || p.Status == tc.status {
					want = append(want, gen.Pet{Id: p.ID, Name: p.Name, CategoryId: p.CategoryID, Status: gen.PetStatus(p.Status)})
				}
			}
			path := apitest.Path(fmt.Sprintf("/pets?limit=%d", tc.limit))
			if tc.status != "" {
				path += "&status=" + string(tc.status)
			}
			got, pages := walk(t, c, path)
			if wantPages := (len(want) + tc.limit - 1) / tc.limit; pages != wantPages {
				t.Errorf("got %d pages, want %d", pages, wantPages)
			}
			if !slices.Equal(got, want) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("got %d pets, want %d; the first difference is at %d: got %+v, want %+v", len(got), len(want), i, got[i], want[i])
					}
				}
				t.Fatalf("got %d pets, want %d", len(got), len(want))
			}
		})
	}
}

// seedStore creates n pets directly in s, statuses cycling through
// pets.Statuses, and returns them.
func seedStore(tb testing.TB, s pets.Store, n int) []pets.Pet {
	tb.Helper()
	out := make([]pets.Pet, n)
	for i := range n {
		p, err := s.Create(context.Background(), pets.NewPet{
			Name:       fmt.Sprintf("pet %d", i),
			CategoryID: int64(i%7 + 1),
			Status:     pets.Statuses[i%len(pets.Statuses)],
			Extra:      pets.Extra(apitest.Extra()), // the members the spec requires beside
		})
		if err != nil {
			tb.Fatalf("seed: %v", err)
		}
		out[i] = p
	}
	return out
}
