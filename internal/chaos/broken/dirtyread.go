package broken

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/petstore/petstore/internal/pets"
)

// rollback makes a create and rolls it back, and returns the id it took.
type rollback func(ctx context.Context, n pets.NewPet) (int64, error)

// rollbackAt rolls creates back in the database at u: the insert takes an
// id from the table's identity, as a create does, and is never committed.
func rollbackAt(u string) rollback {
	var (
		once sync.Once
		pool *pgxpool.Pool
		err  error
	)
	return func(ctx context.Context, n pets.NewPet) (int64, error) {
		once.Do(func() { pool, err = pgxpool.New(context.Background(), u) })
		if err != nil {
			return 0, err
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		tx, err := pool.Begin(ctx)
		if err != nil {
			return 0, err
		}
		defer tx.Rollback(ctx)
		var id int64
		err = tx.QueryRow(ctx, `insert into pets (name, category_id, status) values ($1, $2, $3) returning id`,
			n.Name, n.CategoryID, string(n.Status)).Scan(&id)
		if err != nil {
			return 0, err
		}
		return id, tx.Rollback(ctx)
	}
}

// dirtyRead rolls back one create in every, answers it "nothing was
// written", and shows its pet to reads all the same.
type dirtyRead struct {
	wrapped
	rollback rollback
	every    int
	p        *Plant

	mu    sync.Mutex
	dirty map[int64]pets.Pet
}

func newDirtyRead(s pets.Store, rb rollback, every int, p *Plant) *dirtyRead {
	return &dirtyRead{wrapped: wrapped{s}, rollback: rb, every: every, p: p, dirty: map[int64]pets.Pet{}}
}

// rolledBack reports whether it rolled n back (and keeps its pet).
func (s *dirtyRead) rolledBack(ctx context.Context, n pets.NewPet) bool {
	if rand.IntN(s.every) != 0 {
		return false
	}
	id, err := s.rollback(ctx, n)
	if err != nil {
		return false // create for real
	}
	s.mu.Lock()
	s.dirty[id] = pets.Pet{ID: id, Name: n.Name, CategoryID: n.CategoryID, Status: n.Status}
	s.mu.Unlock()
	s.p.took()
	return true
}

var errRolledBack = fmt.Errorf("broken: %s: the create was rolled back: %w", DirtyRead, pets.ErrUnavailable)

func (s *dirtyRead) Create(ctx context.Context, n pets.NewPet) (pets.Pet, error) {
	if s.rolledBack(ctx, n) {
		return pets.Pet{}, errRolledBack
	}
	return s.Store.Create(ctx, n)
}

func (s *dirtyRead) CreateOnce(ctx context.Context, n pets.NewPet, k pets.IdempotencyKey) (pets.Pet, bool, error) {
	if s.rolledBack(ctx, n) {
		return pets.Pet{}, false, errRolledBack
	}
	return s.Store.CreateOnce(ctx, n, k)
}

func (s *dirtyRead) Get(ctx context.Context, id int64) (pets.Pet, error) {
	s.mu.Lock()
	p, ok := s.dirty[id]
	s.mu.Unlock()
	if ok {
		return p, nil
	}
	return s.Store.Get(ctx, id)
}

// List merges the rolled-back pets the query selects into the page.
func (s *dirtyRead) List(ctx context.Context, q pets.Query) (pets.Page, error) {
	page, err := s.Store.List(ctx, q)
	if err != nil {
		return page, err
	}
	s.mu.Lock()
	for _, p := range s.dirty {
		if p.ID > q.After && (q.Status == "" || p.Status == q.Status) &&
			(!page.More || len(page.Pets) == 0 || p.ID < page.Pets[len(page.Pets)-1].ID) {
			page.Pets = append(page.Pets, p)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(page.Pets, func(a, b pets.Pet) int { return cmp.Compare(a.ID, b.ID) })
	if q.Limit > 0 && len(page.Pets) > q.Limit {
		page.Pets, page.More = page.Pets[:q.Limit], true
	}
	return page, nil
}
