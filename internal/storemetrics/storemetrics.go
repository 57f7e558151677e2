// Package storemetrics measures a pets.Store: Instrument wraps one in a Store
// that records how long each call takes and how it ended in a Prometheus
// histogram, petstore_store_operation_duration_seconds{operation, outcome}.
//
// The wrapper has the methods of pets.Store and no more: a consumer that
// looks for a store's optional methods (Ping, Count) asks the store it
// wraps. It embeds the store: a method added to pets.Store with an
// operation passes through without an edit here, measured by the request
// metrics of its operation (whose series come from the spec), until a
// method of its own here measures it in the store's histogram too.
package storemetrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/petstore/petstore/internal/pets"
)

// Outcomes of a store call: the values of the outcome label.
const (
	outcomeOK          = iota // no error
	outcomeNotFound           // pets.ErrNotFound
	outcomeInvalid            // *pets.ValidationError
	outcomeUnavailable        // pets.ErrUnavailable or a missed deadline
	outcomeCanceled           // the caller gave up (context.Canceled)
	outcomeError              // anything else
	outcomeConflict           // pets.ErrKeyReused or pets.ErrKeyInFlight
	outcomeFull               // pets.ErrFull or pets.ErrKeysFull: a bound reached
	outcomePanic              // pets.ErrPanic: the store recovered from a panic
	numOutcomes
)

var outcomes = [numOutcomes]string{"ok", "not_found", "invalid", "unavailable", "canceled", "error", "conflict", "full", "panic"}

// buckets span a map lookup in memory (tens of microseconds, timer
// included) to a slow database round trip (seconds).
var buckets = []float64{.00001, .000025, .00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}

// Store is a pets.Store that measures the one it wraps.
type Store struct {
	pets.Store
	// The histogram's children, one per outcome, resolved once so that a
	// call costs an array index and an Observe, no label lookup.
	create, get, list [numOutcomes]prometheus.Observer
}

var _ pets.Store = (*Store)(nil)

// Instrument returns s measured by a histogram registered with reg. Every
// label combination exists from the start (at zero), so a rate over an
// outcome that has not happened yet is 0, not missing.
func Instrument(s pets.Store, reg prometheus.Registerer) (*Store, error) {
	vec := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "petstore_store_operation_duration_seconds",
		Help:    "Time taken by calls to the pet store, by operation (create, get, list) and outcome.",
		Buckets: buckets,
	}, []string{"operation", "outcome"})
	if err := reg.Register(vec); err != nil {
		return nil, err
	}
	m := &Store{Store: s}
	for i, o := range outcomes {
		m.create[i] = vec.WithLabelValues("create", o)
		m.get[i] = vec.WithLabelValues("get", o)
		m.list[i] = vec.WithLabelValues("list", o)
	}
	return m, nil
}

// CreateOnce measures the wrapped store's CreateOnce as a create.
func (m *Store) CreateOnce(ctx context.Context, n pets.NewPet, k pets.IdempotencyKey) (pets.Pet, bool, error) {
	start := time.Now()
	p, replayed, err := m.Store.CreateOnce(ctx, n, k)
	m.create[outcome(err)].Observe(time.Since(start).Seconds())
	return p, replayed, err
}

// Create measures the wrapped store's Create.
func (m *Store) Create(ctx context.Context, n pets.NewPet) (pets.Pet, error) {
	start := time.Now()
	p, err := m.Store.Create(ctx, n)
	m.create[outcome(err)].Observe(time.Since(start).Seconds())
	return p, err
}

// Get measures the wrapped store's Get.
func (m *Store) Get(ctx context.Context, id int64) (pets.Pet, error) {
	start := time.Now()
	p, err := m.Store.Get(ctx, id)
	m.get[outcome(err)].Observe(time.Since(start).Seconds())
	return p, err
}

// List measures the wrapped store's List.
func (m *Store) List(ctx context.Context, q pets.Query) (pets.Page, error) {
	start := time.Now()
	page, err := m.Store.List(ctx, q)
	m.list[outcome(err)].Observe(time.Since(start).Seconds())
	return page, err
}

func outcome(err error) int {
	if err == nil {
		return outcomeOK
	}
	var ve *pets.ValidationError
	switch {
	case errors.Is(err, pets.ErrPanic):
		// First: a fault of the server, whatever it told the caller.
		return outcomePanic
	case errors.Is(err, pets.ErrNotFound):
		return outcomeNotFound
	case errors.As(err, &ve):
		return outcomeInvalid
	case errors.Is(err, pets.ErrKeyReused), errors.Is(err, pets.ErrKeyInFlight):
		return outcomeConflict
	case errors.Is(err, pets.ErrFull), errors.Is(err, pets.ErrKeysFull):
		return outcomeFull
	case errors.Is(err, context.Canceled):
		// First: a caller that gave up is not an outage, whatever else
		// the error says.
		return outcomeCanceled
	case errors.Is(err, pets.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return outcomeUnavailable
	}
	return outcomeError
}
