package storemetrics_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/storemetrics"
	"github.com/petstore/petstore/internal/storetest"
)

// The decorator must not change what the store does.
func TestStoreBehaviour(t *testing.T) {
	storetest.Run(t, func(t *testing.T) pets.Store {
		s, err := storemetrics.Instrument(memstore.New(), prometheus.NewRegistry())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// erringStore fails every call it writes out with err. pets.Store, nil, is
// embedded so that a method added to the interface needs no edit here (a
// call to it panics: no test here makes one).
type erringStore struct {
	pets.Store
	err error
}

func (s erringStore) Create(context.Context, pets.NewPet) (pets.Pet, error) { return pets.Pet{}, s.err }
func (s erringStore) CreateOnce(context.Context, pets.NewPet, pets.IdempotencyKey) (pets.Pet, bool, error) {
	return pets.Pet{}, false, s.err
}
func (s erringStore) Get(context.Context, int64) (pets.Pet, error) { return pets.Pet{}, s.err }
func (s erringStore) List(context.Context, pets.Query) (pets.Page, error) {
	return pets.Page{}, s.err
}

// counts returns the number of observations of every operation/outcome pair.
func counts(t *testing.T, reg *prometheus.Registry) map[string]uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, mf := range mfs {
		if mf.GetName() != "petstore_store_operation_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			out[labels["operation"]+"/"+labels["outcome"]] = m.GetHistogram().GetSampleCount()
		}
	}
	return out
}

func TestOutcomes(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, err := storemetrics.Instrument(memstore.New(), reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 2 {
		if _, err := s.Create(ctx, pets.NewPet{Name: "Rex", CategoryID: 1}); err != nil {
			t.Fatal(err)
		}
	}
	s.Create(ctx, pets.NewPet{Name: "", CategoryID: 1}) // invalid
	s.Get(ctx, 1)
	s.Get(ctx, 99) // not found
	s.List(ctx, pets.Query{Limit: 5})
	s.List(ctx, pets.Query{Limit: 0}) // invalid

	for _, tc := range []struct {
		err     error
		outcome string
	}{
		{fmt.Errorf("dial: %w", pets.ErrUnavailable), "unavailable"},
		{context.DeadlineExceeded, "unavailable"},
		{context.Canceled, "canceled"},
		{fmt.Errorf("create: %w: %w", pets.ErrUnavailable, context.Canceled), "canceled"}, // a client that hung up is no outage
		{errors.New("disk on fire"), "error"},
		{fmt.Errorf("key k: %w", pets.ErrKeyReused), "conflict"},
		{fmt.Errorf("key k: %w", pets.ErrKeyInFlight), "conflict"},
		{pets.ErrFull, "full"},
		{&pets.KeysFullError{Wait: time.Minute}, "full"},
		{fmt.Errorf("create: %w: %w: %w", pets.ErrUnavailable, pets.ErrOutcomeUnknown, pets.ErrPanic), "panic"},
	} {
		if _, err := storemetrics.Instrument(erringStore{err: tc.err}, reg); err == nil {
			t.Fatal("a second Instrument on one registry: got nil error, want a duplicate registration error")
		}
		r := prometheus.NewRegistry()
		f, err := storemetrics.Instrument(erringStore{err: tc.err}, r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Get(ctx, 1); !errors.Is(err, tc.err) {
			t.Fatalf("Get: got %v, want the store's error %v", err, tc.err)
		}
		got := counts(t, r)
		if got["get/"+tc.outcome] != 1 {
			t.Errorf("error %v: got %v, want one get/%s", tc.err, got, tc.outcome)
		}
	}

	got := counts(t, reg)
	want := map[string]uint64{"create/ok": 2, "create/invalid": 1, "get/ok": 1, "get/not_found": 1, "list/ok": 1, "list/invalid": 1}
	if len(got) != 27 {
		t.Errorf("got %d series, want 27 (3 operations x 9 outcomes, all from the start)", len(got))
	}
	for k, n := range got {
		if n != want[k] {
			t.Errorf("%s: got %d observations, want %d", k, n, want[k])
		}
	}
}
