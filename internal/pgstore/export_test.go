package pgstore

import (
	"context"
	"slices"
	"time"

	"github.com/petstore/petstore/internal/pets"
)

// Unserialise makes s create without the advisory lock, to measure what the
// lock costs. Tests only: it breaks the listing guarantee. The lock's
// statement stays, without the lock: it also makes the batch plan
// generically, and a round trip's statement count stays the same.
func Unserialise(s *Store) {
	s.steps = slices.Clone(s.steps)
	for i, st := range s.steps {
		if st.Name == StepLock {
			s.steps[i].SQL = `select $1::bigint, set_config('plan_cache_mode', 'force_generic_plan', true)`
		}
	}
}

// SetTimeout replaces QueryTimeout for s.
func SetTimeout(s *Store, d time.Duration) { s.timeout = d }

// Waiting is the number of creates queued for s's committer, not yet taken
// into a batch.
func Waiting(s *Store) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiting)
}

// CommitterPlans returns the custom and the generic plans made so far for
// the statements of batches prepared on s's committer connection, but the
// lock's (which sets generic plans for the rest).
func CommitterPlans(ctx context.Context, s *Store) (custom, generic int64, err error) {
	conn, err := s.writes.Acquire(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Release()
	err = conn.QueryRow(ctx, `select coalesce(sum(custom_plans), 0), coalesce(sum(generic_plans), 0)
		from pg_prepared_statements
		where statement not like '%pg_advisory_xact_lock%' and statement not like '%pg_prepared_statements%'`).Scan(&custom, &generic)
	return custom, generic, err
}

// Closing reports whether Close has begun on s.
func Closing(s *Store) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// The listing queries, for EXPLAIN.
var (
	ListAll      = listAll
	ListByStatus = listByStatus
)

// For the idempotency tests.
var (
	ClassifySent = classifySent
	Classify     = classify
)

// ColumnArgs are one pet's arguments to the statements, in petColumns'
// order; ColumnArrays a batch's.
func ColumnArgs(n pets.NewPet) []any { return columnArgs(&n) }

func ColumnArrays(ns ...pets.NewPet) []any {
	ms := make([]*member, len(ns))
	for i := range ns {
		ms[i] = &member{pet: ns[i]}
	}
	return columnArrays(ms)
}

// The statements of a batch, for EXPLAIN.
var (
	InsertOne        = insertOne
	InsertBatch      = insertBatch
	InsertKeyedBatch = insertKeyedBatch
	CountBatch       = countBatch
)

// SweepKeys and SweepExpired are the bounded removal of expired keys.
const (
	SweepKeys    = sweepKeys
	SweepExpired = sweepExpired
)
