package main

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// logFlushInterval bounds how long a log line waits in the buffer.
const logFlushInterval = 100 * time.Millisecond

// bufferedLog collects log lines in memory and writes them out at most
// logFlushInterval later (sooner when 64 KiB are waiting), and all at Close:
// one write a batch instead of one a request. A clean shutdown loses no
// line; a crash (SIGKILL, a fatal runtime error) can lose the lines of the
// last interval.
type bufferedLog struct {
	mu   sync.Mutex
	w    *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

func newBufferedLog(w io.Writer) *bufferedLog {
	b := &bufferedLog{w: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go b.flushEvery(logFlushInterval)
	return b
}

func (b *bufferedLog) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Write(p)
}

func (b *bufferedLog) flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Flush()
}

func (b *bufferedLog) flushEvery(d time.Duration) {
	defer close(b.done)
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			b.flush()
		case <-b.stop:
			return
		}
	}
}

// Close stops the periodic flush and writes what is left.
func (b *bufferedLog) Close() error {
	close(b.stop)
	<-b.done
	return b.flush()
}
