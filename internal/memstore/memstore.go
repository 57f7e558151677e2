// Package memstore is a pets.Store held in memory, safe for concurrent use.
//
// The catalogue is append-only: the contract has no update or delete, and the
// store assigns IDs 1, 2, 3… in creation order. So a slice indexed by ID-1 is
// already sorted by ID, and one slice of IDs per status is sorted too. Get is
// O(1); List is a binary search for the cursor plus O(limit) copying; Create
// is an amortised O(1) append. No tree, no per-request sort or scan.
//
// A Store may be bounded (WithMaxPets, WithMaxKeys): at a bound a create is
// refused, never made room for. Pets are never removed, and an outcome
// dropped inside its TTL would let a retry create a second pet.
package memstore

import (
	"container/heap"
	"context"
	"crypto/sha256"
	"fmt"
	"sort"
	"sync"
	"time"
	"unique"

	"github.com/petstore/petstore/gen/shape"
	"github.com/petstore/petstore/internal/pets"
)

// record is a stored pet. Its ID is its index in Store.pets plus one; text
// is its name followed by its Extra (one string, one header: most pets
// have no Extra, and the record stays at 32 bytes), nameLen where the name
// ends; status is an index into pets.Statuses.
type record struct {
	text       string
	categoryID int64
	nameLen    uint32
	status     uint8
}

// A status is held in a byte: the build fails when PetStatus has more
// values than a byte holds.
const _ = uint8(len(shape.PetStatuses) - 1)

func (r *record) name() string      { return r.text[:r.nameLen] }
func (r *record) extra() pets.Extra { return pets.Extra(r.text[r.nameLen:]) }

// Store is an in-memory pets.Store. The zero value is not usable; call New.
type Store struct {
	mu       sync.RWMutex
	pets     []record
	byStatus [len(shape.PetStatuses)][]int64 // IDs with each status, ascending

	// The outcomes of CreateOnce, and their expiries in a min-heap: each
	// CreateOnce first drops those expired, so the keys held are those
	// recorded within their TTL.
	keys   map[idemKey]outcome
	expiry expiryHeap
	now    func() time.Time

	maxPets, maxKeys int // bounds; 0 for none
}

// idemKey is an outcome's key. The owner (an API key's digest, the same for
// many outcomes) is interned: one copy of its 64 bytes, not one an outcome.
type idemKey struct {
	owner unique.Handle[string]
	key   string
}

type outcome struct {
	fingerprint [sha256.Size]byte
	id          int64
	expires     time.Time
}

var _ pets.Store = (*Store)(nil)

// Default bounds of the server's memory store (petstore serve's -max-pets
// and -max-idempotency-keys). What the store and the server take at both,
// with the largest pets and keys the contract allows, is computed from the
// schema's bounds (WorstAt, bounds.go), checked by TestWorstCaseSizes and
// cmd/petstore's TestFillMemoryStore, and written into docs/operating.md by
// make generate.
const (
	DefaultMaxPets = 500_000
	DefaultMaxKeys = 100_000
)

// Option configures a Store.
type Option func(*Store)

// WithMaxPets bounds the pets the store holds: a create beyond n is refused
// with pets.ErrFull. n ≤ 0 means no bound, as without the option.
func WithMaxPets(n int) Option { return func(s *Store) { s.maxPets = max(n, 0) } }

// WithMaxKeys bounds the idempotency outcomes kept: a CreateOnce with a new
// key while n are kept within their TTL is refused with a
// *pets.KeysFullError. n ≤ 0 means no bound, as without the option.
func WithMaxKeys(n int) Option { return func(s *Store) { s.maxKeys = max(n, 0) } }

// New returns an empty Store, unbounded unless an option bounds it.
func New(opts ...Option) *Store {
	s := &Store{keys: map[idemKey]outcome{}, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

func statusIndex(s pets.Status) (uint8, bool) {
	for i, v := range pets.Statuses {
		if v == s {
			return uint8(i), true
		}
	}
	return 0, false
}

// Create stores n and returns it with its new ID.
func (s *Store) Create(_ context.Context, n pets.NewPet) (pets.Pet, error) {
	n, err := n.Normalize()
	if err != nil {
		return pets.Pet{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.full() {
		return pets.Pet{}, pets.ErrFull
	}
	return s.add(n), nil
}

// full reports whether the store holds its bound of pets; the caller holds mu.
func (s *Store) full() bool { return s.maxPets > 0 && len(s.pets) >= s.maxPets }

// add stores a normalized n; the caller holds mu.
func (s *Store) add(n pets.NewPet) pets.Pet {
	si, _ := statusIndex(n.Status)
	text := n.Name
	if n.Extra != "" {
		text += string(n.Extra)
	}
	s.pets = append(s.pets, record{text: text, categoryID: n.CategoryID, nameLen: uint32(len(n.Name)), status: si})
	id := int64(len(s.pets))
	s.byStatus[si] = append(s.byStatus[si], id)
	return pets.Pet{ID: id, Name: n.Name, CategoryID: n.CategoryID, Status: n.Status, Extra: n.Extra}
}

// CreateOnce stores n unless k was recorded, within its TTL, for an earlier
// create. A create in memory is atomic under mu, so a concurrent call with
// the same key waits for it and replays it: ErrKeyInFlight never happens.
// A recorded key is answered at the bounds too; a new one is refused there,
// pets.ErrFull first.
func (s *Store) CreateOnce(_ context.Context, n pets.NewPet, k pets.IdempotencyKey) (pets.Pet, bool, error) {
	n, err := n.Normalize()
	if err != nil {
		return pets.Pet{}, false, err
	}
	fp := n.Fingerprint()
	ik := idemKey{unique.Make(k.Owner), k.Key}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.dropExpired(now)
	if o, ok := s.keys[ik]; ok {
		if o.fingerprint != fp {
			return pets.Pet{}, false, fmt.Errorf("key %.64q: %w", k.Key, pets.ErrKeyReused)
		}
		return s.pet(o.id), true, nil
	}
	if s.full() {
		return pets.Pet{}, false, pets.ErrFull
	}
	if s.maxKeys > 0 && len(s.keys) >= s.maxKeys {
		return pets.Pet{}, false, &pets.KeysFullError{Wait: s.expiry[0].at.Sub(now)}
	}
	p := s.add(n)
	o := outcome{fingerprint: fp, id: p.ID, expires: now.Add(k.TTL)}
	s.keys[ik] = o
	heap.Push(&s.expiry, expiring{ik, o.expires})
	return p, false, nil
}

// dropExpired forgets the outcomes whose TTL has passed; the caller holds mu.
func (s *Store) dropExpired(now time.Time) {
	for len(s.expiry) > 0 && !s.expiry[0].at.After(now) {
		e := heap.Pop(&s.expiry).(expiring)
		if o, ok := s.keys[e.key]; ok && o.expires.Equal(e.at) {
			delete(s.keys, e.key)
		}
	}
}

// Keys returns the number of idempotency keys held, expired ones included
// until the next CreateOnce drops them.
func (s *Store) Keys() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.keys)
}

// expiring is a recorded key and when it expires.
type expiring struct {
	key idemKey
	at  time.Time
}

// expiryHeap is a container/heap of expiries, the soonest first.
type expiryHeap []expiring

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiring)) }
func (h *expiryHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Get returns the pet with the given ID.
func (s *Store) Get(_ context.Context, id int64) (pets.Pet, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if id < 1 || id > int64(len(s.pets)) {
		return pets.Pet{}, fmt.Errorf("pet %d: %w", id, pets.ErrNotFound)
	}
	return s.pet(id), nil
}

// Count returns the number of pets, in O(1).
func (s *Store) Count(context.Context) (int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return int64(len(s.pets)), nil
}

// pet returns the pet with an ID known to exist; the caller holds mu.
func (s *Store) pet(id int64) pets.Pet {
	r := &s.pets[id-1]
	return pets.Pet{ID: id, Name: r.name(), CategoryID: r.categoryID, Status: pets.Statuses[r.status], Extra: r.extra()}
}

// List returns the page of pets that q selects.
func (s *Store) List(_ context.Context, q pets.Query) (pets.Page, error) {
	if err := q.Check(); err != nil {
		return pets.Page{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if q.Status == "" {
		// IDs are 1..len(s.pets), so the first ID after the cursor is
		// q.After+1, written so that it cannot overflow.
		first := min(q.After, int64(len(s.pets))) + 1
		page := newPage(int64(len(s.pets))-first+1, q.Limit)
		for i := range page.Pets {
			page.Pets[i] = s.pet(first + int64(i))
		}
		return page, nil
	}
	si, _ := statusIndex(q.Status)
	ids := s.byStatus[si]
	ids = ids[sort.Search(len(ids), func(i int) bool { return ids[i] > q.After }):]
	page := newPage(int64(len(ids)), q.Limit)
	for i := range page.Pets {
		page.Pets[i] = s.pet(ids[i])
	}
	return page, nil
}

// newPage returns a page of exactly the pets it will hold, the first limit of
// the left that match, in one allocation; More tells whether some are left.
func newPage(left int64, limit int) pets.Page {
	n := min(left, int64(limit))
	return pets.Page{Pets: make([]pets.Pet, n), More: left > n}
}
