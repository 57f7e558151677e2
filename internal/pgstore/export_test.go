package pgstore

import (
	"slices"
	"time"
)

// Unserialise makes s create without the advisory lock, to measure what the
// lock costs. Tests only: it breaks the listing guarantee.
func Unserialise(s *Store) {
	s.steps = slices.DeleteFunc(slices.Clone(s.steps), func(st Step) bool { return st.Name == StepLock })
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

// Closing reports whether Close has begun on s.
func Closing(s *Store) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// The listing queries, for EXPLAIN.
const (
	ListAll      = listAll
	ListByStatus = listByStatus
)

// For the idempotency tests.
var (
	ClassifySent = classifySent
	Classify     = classify
)

// The statements of a batch, for EXPLAIN.
const (
	InsertBatch      = insertBatch
	InsertKeyedBatch = insertKeyedBatch
	CountBatch       = countBatch
)

// SweepKeys and SweepExpired are the bounded removal of expired keys.
const (
	SweepKeys    = sweepKeys
	SweepExpired = sweepExpired
)
