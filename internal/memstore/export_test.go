package memstore

import "time"

// SetClock replaces the clock that CreateOnce reads.
func SetClock(s *Store, now func() time.Time) { s.now = now }
