package pgstore

import "time"

// CreateLock is the advisory lock key that Create takes.
const CreateLock = createLock

// Unserialise makes s create without the advisory lock, to measure what the
// lock costs. Tests only: it breaks the listing guarantee.
func Unserialise(s *Store) { s.serialise = false }

// SetTimeout replaces QueryTimeout for s.
func SetTimeout(s *Store, d time.Duration) { s.timeout = d }

// The listing queries, for EXPLAIN.
const (
	ListAll      = listAll
	ListByStatus = listByStatus
)

// For the idempotency tests.
var (
	KeyLock      = keyLock
	ClassifySent = classifySent
	Classify     = classify
)

// SweepKeys and SweepExpired are the bounded removal of expired keys.
const (
	SweepKeys    = sweepKeys
	SweepExpired = sweepExpired
)
