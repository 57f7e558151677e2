package connlimit

import "time"

// Closable returns the number of l's connections closable for room now.
func Closable(l *Limiter) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for c := l.conns.front(); c != nil; c = l.conns.after(c) {
		if c.closable(time.Now()) {
			n++
		}
	}
	return n
}

// Deadline is r's deadline for the byte after the first n of a body first
// read at start.
func Deadline(r BodyRule, start time.Time, n int64) time.Time { return r.deadline(start, n) }
