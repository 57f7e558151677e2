package broken_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petstore/petstore/internal/chaos/broken"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/pgstore"
	"github.com/petstore/petstore/internal/pgtest"
)

func openPlanted(t *testing.T, dbURL, kind string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), dbURL, broken.Options(kind)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestPostgresNoLock: a nolock store creates while another session holds
// the create lock, which a sound store waits for.
func TestPostgresNoLock(t *testing.T) {
	dbURL := pgtest.Schema(t)
	s := openPlanted(t, dbURL, broken.NoLock)
	ctx := context.Background()
	holder, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	if _, err := holder.Exec(ctx, "select pg_advisory_lock($1)", pgstore.CreateLock); err != nil {
		t.Fatal(err)
	}
	defer holder.Exec(ctx, "select pg_advisory_unlock($1)", pgstore.CreateLock)
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := s.Create(cctx, pets.NewPet{Name: "Rex", CategoryID: 1}); err != nil {
		t.Fatalf("nolock Create with the lock held elsewhere: %v; want it created at once", err)
	}
}

// TestPostgresReorder: from concurrent creates (batched), keyed and not, a
// reorder store acknowledges pets that are not the ones stored under their
// ids; a sound store never does.
func TestPostgresReorder(t *testing.T) {
	for _, kind := range []string{"", broken.Reorder} {
		s := openPlanted(t, pgtest.Schema(t), kind)
		ctx := context.Background()
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			wrong int
		)
		for w := range 8 {
			wg.Go(func() {
				for i := range 25 {
					n := pets.NewPet{Name: fmt.Sprintf("w%d #%d", w, i), CategoryID: 1}
					var (
						p   pets.Pet
						err error
					)
					if w%2 == 0 {
						p, err = s.Create(ctx, n)
					} else {
						p, _, err = s.CreateOnce(ctx, n, pets.IdempotencyKey{Owner: "o", Key: n.Name, TTL: time.Hour})
					}
					if err != nil {
						t.Error(err)
						return
					}
					got, err := s.Get(ctx, p.ID)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					if got != p {
						wrong++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if (wrong > 0) != (kind == broken.Reorder) {
			t.Errorf("kind %q: %d of 200 acknowledged pets not stored as acknowledged", kind, wrong)
		}
		t.Logf("kind %q: %d of 200 acknowledged pets not stored as acknowledged", kind, wrong)
	}
}
