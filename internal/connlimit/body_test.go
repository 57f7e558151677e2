package connlimit_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/connlimit"
)

// serveRule runs an http.Server with h behind a Limiter of max connections
// holding bodies to rule, on a loopback port until the test ends.
func serveRule(t *testing.T, max int, rule connlimit.BodyRule, h http.Handler) (*connlimit.Limiter, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := connlimit.New(max)
	l.Body = rule
	srv := &http.Server{Handler: h, ReadHeaderTimeout: time.Minute}
	lln := l.Wrap(srv, ln)
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(lln)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return l, ln.Addr().String()
}

// reading is a handler that reads its body whole, and answers 400 when
// that fails, 408 when the body came too slowly.
var reading = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if _, err := io.ReadAll(r.Body); err != nil {
		if errors.Is(err, connlimit.ErrBodyTooSlow) && errors.Is(err, os.ErrDeadlineExceeded) {
			w.WriteHeader(http.StatusRequestTimeout)
			return
		}
		w.WriteHeader(http.StatusBadRequest)
	}
})

const trickled = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\""

// TestBodyWaitClosable: a connection running a request whose body is being
// read, and not arriving, waits for its client: at the bound it is closed
// for a new connection, the least recently active first, unanswered.
func TestBodyWaitClosable(t *testing.T) {
	l, addr := serveRule(t, 2, connlimit.BodyRule{}, reading)
	first := dial(t, addr, trickled)
	apitest.Eventually(t, "the first body waited for", func() bool { return connlimit.Closable(l) == 1 })
	second := dial(t, addr, trickled)
	apitest.Eventually(t, "both bodies waited for", func() bool { return connlimit.Closable(l) == 2 })
	probe := dial(t, addr, whole)
	if got := get(t, probe); got != http.StatusOK {
		t.Fatalf("a request at the bound beside two trickling bodies: got %d, want 200", got)
	}
	if !closedByServer(first, 5*time.Second) {
		t.Error("the least recently active trickling body is still open")
	}
	if closedByServer(second, 100*time.Millisecond) {
		t.Error("the more recently active trickling body was closed")
	}
	if got := closedAtLimit(t, l, "least_recent"); got != 1 {
		t.Errorf("closed at limit, least recent: got %v, want 1", got)
	}
}

// TestBodyTooSlow: a body that falls behind the rule fails with
// ErrBodyTooSlow, and the handler can still answer.
func TestBodyTooSlow(t *testing.T) {
	_, addr := serveRule(t, 4, connlimit.BodyRule{Grace: 100 * time.Millisecond, MinRate: 1000, Max: time.Second}, reading)
	c := dial(t, addr, trickled)
	if got := get(t, c); got != http.StatusRequestTimeout {
		t.Errorf("a body stopped after 2 bytes: got %d, want 408", got)
	}
	// Max: a body that keeps coming at the rate, too long.
	_, addr = serveRule(t, 4, connlimit.BodyRule{Max: 200 * time.Millisecond}, reading)
	c = dial(t, addr, trickled)
	if got := get(t, c); got != http.StatusRequestTimeout {
		t.Errorf("a body past Max: got %d, want 408", got)
	}
}

// TestBodyRuleEndsWithTheBody: once the body is read whole, the rule's
// deadline is gone: net/http's read of the connection in the background,
// which cancels the request when it fails, is not cut while the handler
// works on past it.
func TestBodyRuleEndsWithTheBody(t *testing.T) {
	rule := connlimit.BodyRule{Grace: 50 * time.Millisecond, MinRate: 1000, Max: 100 * time.Millisecond}
	_, addr := serveRule(t, 4, rule, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		select { // the work outlasts every deadline of the body's
		case <-time.After(3 * rule.Max):
		case <-r.Context().Done():
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	c := dial(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
	if got := get(t, c); got != http.StatusOK {
		t.Errorf("a handler working past the body's deadlines: got %d, want 200 (its request cancelled?)", got)
	}
}

// TestBodyRuleDeadline: the k-th byte is due Grace and k / MinRate after
// the first read, and none later than Max.
func TestBodyRuleDeadline(t *testing.T) {
	start := time.Unix(1000, 0)
	for _, tc := range []struct {
		rule connlimit.BodyRule
		read int64
		want time.Duration // after start; 0 for none
	}{
		{connlimit.BodyRule{Grace: 5 * time.Second, MinRate: 240, Max: 15 * time.Second}, 0, 5*time.Second + time.Second/240},
		{connlimit.BodyRule{Grace: 5 * time.Second, MinRate: 240, Max: 15 * time.Second}, 239, 6 * time.Second},
		{connlimit.BodyRule{Grace: 5 * time.Second, MinRate: 240, Max: 15 * time.Second}, 100000, 15 * time.Second},
		{connlimit.BodyRule{Grace: time.Second, MinRate: 100}, 1 << 20, time.Second + (1<<20+1)*time.Second/100},
		{connlimit.BodyRule{Max: 2 * time.Second}, 7, 2 * time.Second},
		{connlimit.BodyRule{}, 7, 0},
	} {
		got := connlimit.Deadline(tc.rule, start, tc.read)
		want := time.Time{}
		if tc.want != 0 {
			want = start.Add(tc.want)
		}
		if !got.Equal(want) {
			t.Errorf("%+v after %d bytes: got %v, want %v", tc.rule, tc.read, got.Sub(start), tc.want)
		}
	}
}
