package broken_test

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petstore/petstore/internal/chaos/broken"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/pgstore"
	"github.com/petstore/petstore/internal/pgtest"
)

// openPlanted opens a PostgreSQL store on dbURL with the plant of kind, as
// a chaosbroken server does, and returns it with the evidence file.
func openPlanted(t *testing.T, dbURL, kind string) (pets.Store, string) {
	t.Helper()
	p, evidence := plant(t, kind)
	u, err := p.URL(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	return p.Store(u, pgtest.Open(t, u, p.Options()...)), evidence
}

// TestPostgresNoLock: a nolock store creates while another session holds
// the create lock, which a sound store waits for; its evidence says so.
// And it goes on creating on a new connection once its first has gone (a
// pause shared between batches kept the statement prepared on the first:
// "prepared statement ... does not exist").
func TestPostgresNoLock(t *testing.T) {
	dbURL := pgtest.Schema(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	app := fmt.Sprintf("nolock-%d", time.Now().UnixNano())
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	s, evidence := openPlanted(t, u.String(), broken.NoLock)
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
	took(t, evidence, broken.NoLock, false)
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := s.Create(cctx, pets.NewPet{Name: "Rex", CategoryID: 1}); err != nil {
		t.Fatalf("nolock Create with the lock held elsewhere: %v; want it created at once", err)
	}
	took(t, evidence, broken.NoLock, true)

	if _, err := holder.Exec(ctx, "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1", app); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // the first may meet the connection ended
		if _, err = s.Create(ctx, pets.NewPet{Name: fmt.Sprint("after ", i), CategoryID: 1}); err == nil {
			return
		}
	}
	t.Fatalf("creates on a new connection: %v", err)
}

// TestPostgresReorder: from concurrent creates (batched), keyed and not, a
// reorder store acknowledges pets that are not the ones stored under their
// ids, and says it took effect; a sound store never does either.
func TestPostgresReorder(t *testing.T) {
	for _, kind := range []string{"", broken.Reorder} {
		s, evidence := openPlanted(t, pgtest.Schema(t), kind)
		wrong := createConcurrently(t, s)
		if (wrong > 0) != (kind == broken.Reorder) {
			t.Errorf("kind %q: %d of 200 acknowledged pets not stored as acknowledged", kind, wrong)
		}
		took(t, evidence, broken.Reorder, kind == broken.Reorder)
		t.Logf("kind %q: %d of 200 acknowledged pets not stored as acknowledged", kind, wrong)
	}
}

// createConcurrently creates 200 pets from 8 goroutines on s, half of them
// with a key, and returns how many were acknowledged otherwise than they
// are stored.
func createConcurrently(t *testing.T, s pets.Store) int {
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
	return wrong
}

// TestPostgresAsyncCommit: the store's sessions run with synchronous_commit
// off, and the plant says so once a batch has run on one; the same tracer
// on a store opened without the setting says nothing.
func TestPostgresAsyncCommit(t *testing.T) {
	dbURL := pgtest.Schema(t)
	ctx := context.Background()
	s, evidence := openPlanted(t, dbURL, broken.AsyncCommit)
	if _, err := s.Create(ctx, pets.NewPet{Name: "Rex", CategoryID: 1}); err != nil {
		t.Fatal(err)
	}
	took(t, evidence, broken.AsyncCommit, true)

	p, unplanted := plant(t, broken.AsyncCommit)
	sound := pgtest.Open(t, dbURL, p.Options()...) // the tracer, not the URL
	if _, err := sound.Create(ctx, pets.NewPet{Name: "Tom", CategoryID: 1}); err != nil {
		t.Fatal(err)
	}
	took(t, unplanted, broken.AsyncCommit, false)
}
