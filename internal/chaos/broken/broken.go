// Package broken plants the defects that prove the chaos run's audit
// (make chaos-broken): each kind is a store that breaks one promise of the
// contract, so that a run that does not report it shows a blind spot in the
// audit. Only a server built with the chaosbroken tag links this package
// (cmd/petstore/broken.go); the stores' production code knows nothing of it
// beyond one seam, the table of a batch's statements (pgstore.go here).
package broken

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/petstore/petstore/internal/pets"
)

// The kinds this package plants beside those of pgstore.go.
const (
	// AsyncCommit acknowledges a create before its commit is durable: the
	// store's sessions run with synchronous_commit off.
	AsyncCommit = "asynccommit"
	// NoKey ignores Idempotency-Key: every create creates.
	NoKey = "nokey"
	// NoUnknown answers a create whose commit may have happened as if
	// nothing was written.
	NoUnknown = "nounknown"
	// DirtyRead shows reads the pets of creates it rolled back: one create
	// in twenty is inserted and rolled back, and answered 503 unavailable
	// (true: nothing was written), but its pet is kept in memory and
	// served by getPet and listPets as if stored: a read of uncommitted
	// data.
	DirtyRead = "dirtyread"
	// FsyncOff is a broken configuration, not a broken server: the chaos
	// run starts PostgreSQL with fsync=off, and a power cut loses what
	// was acknowledged. The server ignores it.
	FsyncOff = "fsyncoff"
)

// Env is the variable that names the kind a chaosbroken build plants.
const Env = "PETSTORE_CHAOS_BROKEN"

// DatabaseURL returns the URL the store opens for kind: with AsyncCommit,
// the URL with synchronous_commit=off, which pgx sends as a run-time
// parameter of every session; otherwise u itself.
func DatabaseURL(kind, u string) (string, error) {
	if kind != AsyncCommit || u == "" {
		return u, nil
	}
	if !strings.Contains(u, "://") {
		return u + " synchronous_commit=off", nil // key=value form
	}
	p, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("broken: %s: the database URL does not parse", kind)
	}
	q := p.Query()
	q.Set("synchronous_commit", "off")
	p.RawQuery = q.Encode()
	return p.String(), nil
}

// Store returns s, opened at the database URL u (empty for the memory
// store), with kind's defect planted: NoKey, NoUnknown and DirtyRead wrap
// it; any other kind returns s.
func Store(kind, u string, s pets.Store) pets.Store {
	switch kind {
	case NoKey:
		return noKey{wrapped{s}}
	case NoUnknown:
		return noUnknown{wrapped{s}}
	case DirtyRead:
		return newDirtyRead(s, rollbackAt(u), 20)
	}
	return s
}

// wrapped is the store a defect wraps, with the optional methods that
// /readyz (Ping) and /metrics (Count) look for passed through, so that a
// broken build differs from a sound one only in its defect.
type wrapped struct{ pets.Store }

func (w wrapped) Ping(ctx context.Context) error {
	if p, ok := w.Store.(interface{ Ping(context.Context) error }); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (w wrapped) Count(ctx context.Context) (int64, error) {
	if c, ok := w.Store.(interface {
		Count(context.Context) (int64, error)
	}); ok {
		return c.Count(ctx)
	}
	return 0, errors.New("broken: the store does not count")
}

// noKey creates on every CreateOnce, as if the key were not there.
type noKey struct{ wrapped }

func (s noKey) CreateOnce(ctx context.Context, n pets.NewPet, _ pets.IdempotencyKey) (pets.Pet, bool, error) {
	p, err := s.Create(ctx, n)
	return p, false, err
}

// noUnknown drops ErrOutcomeUnknown: a create that may have been stored is
// answered "nothing was written".
type noUnknown struct{ wrapped }

func (s noUnknown) Create(ctx context.Context, n pets.NewPet) (pets.Pet, error) {
	p, err := s.Store.Create(ctx, n)
	return p, known(err)
}

func (s noUnknown) CreateOnce(ctx context.Context, n pets.NewPet, k pets.IdempotencyKey) (pets.Pet, bool, error) {
	p, replayed, err := s.Store.CreateOnce(ctx, n, k)
	return p, replayed, known(err)
}

func known(err error) error {
	if errors.Is(err, pets.ErrOutcomeUnknown) {
		return fmt.Errorf("broken: %s: %w", err.Error(), pets.ErrUnavailable)
	}
	return err
}
