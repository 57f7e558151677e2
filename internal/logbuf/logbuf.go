// Package logbuf is a buffered, bounded writer of log lines: a request
// appends its access line to memory and goes on, and one goroutine writes
// what has gathered to the log in one Write, at an interval, when half the
// buffer is full, and on Flush or Close (the server's drain). A request is
// never held up by the log: a line that finds no room, because the log
// takes longer to write than the lines take to come, is dropped and
// counted (petstore_log_lines_dropped_total), never waited for. zap's
// BufferedWriteSyncer is the design, but for that: it writes a full buffer
// in the caller's goroutine.
//
// Two buffers take turns: lines go into one while the other is written, so
// a line waits for at most one write in progress and one interval. What a
// crash loses is the lines of the last interval.
package logbuf

import (
	"io"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Writer is a buffered, bounded writer of whole lines (see the package
// doc). It is safe for concurrent use.
type Writer struct {
	w    io.Writer
	size int

	mu      sync.Mutex
	buf     []byte // lines gathered, up to size
	spare   []byte // the other buffer, empty while not being written
	kicked  bool   // kick sent since the last swap
	closed  bool
	flushMu sync.Mutex // held while a buffer is written

	kick, stop chan struct{}
	done       chan struct{}
	dropped    prometheus.Counter
}

// New returns a Writer of lines to w, holding at most size bytes while
// they wait, written at every interval at least. Close it to stop its
// goroutine.
func New(w io.Writer, size int, interval time.Duration) *Writer {
	b := &Writer{
		w: w, size: size,
		buf: make([]byte, 0, size), spare: make([]byte, 0, size),
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "petstore_log_lines_dropped_total",
			Help: "Access log lines dropped because the log's buffer was full: the log is written slower than requests come.",
		}),
	}
	go b.run(interval)
	return b
}

// Collectors returns the Writer's metrics.
func (b *Writer) Collectors() []prometheus.Collector { return []prometheus.Collector{b.dropped} }

// Write appends p, one or more whole lines, to the buffer, or drops it when
// the buffer has no room for it (or the Writer is closed). It never waits
// for the log, and never fails: a dropped line is counted.
func (b *Writer) Write(p []byte) (int, error) {
	b.mu.Lock()
	if b.closed || len(b.buf)+len(p) > b.size {
		b.mu.Unlock()
		b.dropped.Inc()
		return len(p), nil
	}
	b.buf = append(b.buf, p...)
	kick := !b.kicked && len(b.buf) >= b.size/2
	if kick {
		b.kicked = true
	}
	b.mu.Unlock()
	if kick {
		select {
		case b.kick <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

// Flush writes the lines gathered so far, once a write in progress is done.
func (b *Writer) Flush() error {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	b.mu.Lock()
	full := b.buf
	b.buf, b.spare = b.spare, nil
	b.kicked = false
	b.mu.Unlock()
	var err error
	if len(full) > 0 {
		_, err = b.w.Write(full)
	}
	b.mu.Lock()
	b.spare = full[:0]
	b.mu.Unlock()
	return err
}

// Close writes what is gathered and stops the Writer: lines written after
// it are dropped.
func (b *Writer) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	close(b.stop)
	<-b.done
	return b.Flush()
}

func (b *Writer) run(interval time.Duration) {
	defer close(b.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		case <-b.kick:
		}
		b.Flush()
	}
}
