package server

import (
	"fmt"
	"io"
	"sync"
)

// logOut is where the server's log lines go: each line is written through
// to w at once, one Write a line, so that a crash loses none; the access
// lines come in batches, through a logbuf.Writer. A failed write
// is reported on stderr when writes start failing, once, not for every
// line; the lines go on being written, and the report is made again only
// after a write has succeeded in between.
type logOut struct {
	mu      sync.Mutex
	w       io.Writer
	stderr  io.Writer
	failing bool
}

func newLogOut(w, stderr io.Writer) *logOut { return &logOut{w: w, stderr: stderr} }

func (l *logOut) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(p)
	switch {
	case err != nil && !l.failing:
		l.failing = true
		fmt.Fprintf(l.stderr, "petstore: writing the log failed: %v; lines are lost until a write succeeds\n", err)
	case err == nil:
		l.failing = false
	}
	return n, err
}
