// Package broken plants the defects that prove the chaos run's audit
// (make chaos-broken): each kind breaks one promise of the contract, so
// that a run that does not report it shows a blind spot in the audit. Only
// a server built with the chaosbroken tag links this package
// (cmd/petstore/broken.go).
//
// A defect reaches the store from outside, never through its production
// code: a wrapper of the store (nokey, nounknown, dirtyread), a connection
// setting (asynccommit), a pgx tracer on the store's connections, the hook
// pgstore.WithTracer offers every deployment (nolock, reorder: it changes
// a batch's arguments and answers, never a statement's text), or the
// cluster's configuration (fsyncoff, which the run sets). And each plant
// proves it took effect: the first time it does in a process, it appends
// its kind to the evidence file (EvidenceEnv), and a run whose evidence
// lacks the kind fails as not planted, whatever the audit found.
package broken

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/pgstore"
)

// The kinds of defect.
const (
	// NoLock commits batches without the create lock (the tracer gives
	// each batch's lock a key of its own), and pauses up to 20 ms between
	// the insert and the count (whose row lock would otherwise order most
	// commits): ids no longer follow commit order.
	NoLock = "nolock"
	// Reorder hands the rows of a batch's insert back to the store in
	// reverse order: every member of a batch of two or more is
	// acknowledged with another member's id.
	Reorder = "reorder"
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
	// run starts PostgreSQL with fsync=off, checks that the cluster runs
	// so, and records the evidence itself. The server ignores it.
	FsyncOff = "fsyncoff"
)

// Kinds are the kinds of defect, sorted.
var Kinds = []string{AsyncCommit, DirtyRead, FsyncOff, NoKey, NoLock, NoUnknown, Reorder}

// Env is the variable that names the kind a chaosbroken build plants, and
// EvidenceEnv the file its evidence goes to.
const (
	Env         = "PETSTORE_CHAOS_BROKEN"
	EvidenceEnv = "PETSTORE_CHAOS_EVIDENCE"
)

// Plant is one kind of defect, planted in the store a server opens.
type Plant struct {
	kind     string
	evidence string // the evidence file; none when empty
	once     sync.Once
	fired    atomic.Int64
}

// New returns the plant of kind ("" plants nothing), whose evidence goes
// to the file evidence (none when empty).
func New(kind, evidence string) (*Plant, error) {
	if kind != "" && !slices.Contains(Kinds, kind) {
		return nil, fmt.Errorf("%s=%s: want one of %s", Env, kind, strings.Join(Kinds, ", "))
	}
	return &Plant{kind: kind, evidence: evidence}, nil
}

// Fired is how many times the plant took effect in this process.
func (p *Plant) Fired() int64 { return p.fired.Load() }

// took records that the plant took effect: in the evidence file, the first
// time. A failure to write it leaves the evidence without the kind, and
// the run fails as if the plant had not taken.
func (p *Plant) took() {
	p.fired.Add(1)
	p.once.Do(func() {
		if p.evidence != "" {
			Record(p.evidence, p.kind)
		}
	})
}

// Record appends kind to the evidence file at path.
func Record(path, kind string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(kind + "\n")
	return errors.Join(err, f.Close())
}

// Took reports whether the evidence file at path says kind took effect. A
// file that does not exist says nothing took effect.
func Took(path, kind string) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return slices.Contains(strings.Split(string(b), "\n"), kind), nil
}

// URL returns the URL the store opens: with AsyncCommit, u with
// synchronous_commit=off, which pgx sends as a run-time parameter of every
// session; otherwise u itself.
func (p *Plant) URL(u string) (string, error) {
	if p.kind != AsyncCommit || u == "" {
		return u, nil
	}
	if !strings.Contains(u, "://") {
		return u + " synchronous_commit=off", nil // key=value form
	}
	pu, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("broken: %s: the database URL does not parse", p.kind)
	}
	q := pu.Query()
	q.Set("synchronous_commit", "off")
	pu.RawQuery = q.Encode()
	return pu.String(), nil
}

// Options returns the PostgreSQL store's Options that plant the kind: a
// tracer, for NoLock, Reorder and AsyncCommit (which only watches).
func (p *Plant) Options() []pgstore.Option {
	switch p.kind {
	case NoLock, Reorder, AsyncCommit:
		return []pgstore.Option{pgstore.WithTracer(&tracer{p: p})}
	}
	return nil
}

// Store returns s, opened at the database URL u (empty for the memory
// store), with the kind's defect planted: NoKey, NoUnknown and DirtyRead
// wrap it; any other kind returns s.
func (p *Plant) Store(u string, s pets.Store) pets.Store {
	switch p.kind {
	case NoKey:
		return noKey{wrapped{s}, p}
	case NoUnknown:
		return noUnknown{wrapped{s}, p}
	case DirtyRead:
		return newDirtyRead(s, rollbackAt(u), 20, p)
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
type noKey struct {
	wrapped
	p *Plant
}

func (s noKey) CreateOnce(ctx context.Context, n pets.NewPet, _ pets.IdempotencyKey) (pets.Pet, bool, error) {
	s.p.took()
	p, err := s.Create(ctx, n)
	return p, false, err
}

// noUnknown drops ErrOutcomeUnknown: a create that may have been stored is
// answered "nothing was written".
type noUnknown struct {
	wrapped
	p *Plant
}

func (s noUnknown) Create(ctx context.Context, n pets.NewPet) (pets.Pet, error) {
	p, err := s.Store.Create(ctx, n)
	return p, s.known(err)
}

func (s noUnknown) CreateOnce(ctx context.Context, n pets.NewPet, k pets.IdempotencyKey) (pets.Pet, bool, error) {
	p, replayed, err := s.Store.CreateOnce(ctx, n, k)
	return p, replayed, s.known(err)
}

func (s noUnknown) known(err error) error {
	if errors.Is(err, pets.ErrOutcomeUnknown) {
		s.p.took()
		return fmt.Errorf("broken: %s: %w", err.Error(), pets.ErrUnavailable)
	}
	return err
}
