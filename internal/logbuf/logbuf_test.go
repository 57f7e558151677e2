package logbuf_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/logbuf"
	"github.com/petstore/petstore/internal/syncbuf"
)

// TestLinesInOrder: lines arrive whole and in order, at the interval
// without a Flush, and at once on Close.
func TestLinesInOrder(t *testing.T) {
	var out syncbuf.Buffer
	b := logbuf.New(&out, 1<<10, 10*time.Millisecond)
	b.Write([]byte("one\n"))
	b.Write([]byte("two\n"))
	apitest.Eventually(t, "the interval's write", func() bool { return out.String() == "one\ntwo\n" })
	b.Write([]byte("three\n"))
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "one\ntwo\nthree\n" {
		t.Errorf("after Close: got %q", got)
	}
	b.Write([]byte("late\n"))
	if got := testutil.ToFloat64(b.Collectors()[0]); got != 1 {
		t.Errorf("a line after Close: dropped %v, want 1", got)
	}
}

// stuck is a log whose writes wait until released.
type stuck struct {
	release chan struct{}
	mu      sync.Mutex
	got     strings.Builder
	writing chan struct{}
}

func (s *stuck) Write(p []byte) (int, error) {
	s.writing <- struct{}{}
	<-s.release
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got.Write(p)
}

// TestNeverWaitsForTheLog: while the log does not take a write, Write goes
// on returning at once; the lines that find no room are dropped and
// counted, the rest arrive once the log takes them.
func TestNeverWaitsForTheLog(t *testing.T) {
	s := &stuck{release: make(chan struct{}), writing: make(chan struct{}, 16)}
	b := logbuf.New(s, 100, time.Hour)
	line := func(i int) []byte { return fmt.Appendf(nil, "line %03d\n", i) } // 9 bytes
	for i := range 6 {                                                       // past half of 100: the writer is kicked
		b.Write(line(i))
	}
	<-s.writing // it holds the first six in its write, stuck
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 6; i < 40; i++ { // 11 fit the other buffer; 23 find no room
			b.Write(line(i))
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Write waited for the log")
	}
	if got := testutil.ToFloat64(b.Collectors()[0]); got != 23 {
		t.Errorf("dropped: got %v, want 23", got)
	}
	close(s.release)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := range 17 {
		want.Write(line(i))
	}
	if got := s.got.String(); got != want.String() {
		t.Errorf("written: got %q, want lines 0 to 16", got)
	}
}
